"""memeval report RUN_DIR [RUN_DIR ...] [--reference RUN_DIR] [--out DIR]

Writes DIR/report.md, DIR/report.html (self-contained) and DIR/figures/*.png from run folders:
EpBench F1 by cue bucket (GSW Table 2 shape) with P/R, Simple Recall and Chronological
Awareness; efficiency and cost (Table 3 shape); LoCoMo per category; LongMemEval per type; paired
bootstrap differences against --reference (same questions, judge, data version and policy only);
with --judge-matrix, the judge-sensitivity matrix of the runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .build import ReportError, build_report
from .prices import DEFAULT_CHAT, DEFAULT_EMBEDDER, DEFAULT_TABLE, load_reference


def main(argv: list[str] | None = None, prog: str = "memeval report") -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="scored run folders (runs/<dataset>/<method>-<hash>)")
    ap.add_argument("--reference", type=Path, default=None,
                    help="paired bootstrap differences of every run of its dataset against this run")
    ap.add_argument("--out", type=Path, default=Path("report"), help="output folder (default: ./report)")
    ap.add_argument("--allow-degenerate", action="store_true",
                    help="star significant paired differences of runs that failed a health check too "
                         "(by default they are not starred: such a run's numbers may mean nothing)")
    ap.add_argument("--prices", type=Path, default=DEFAULT_TABLE,
                    help="price table for the API-equivalent cost (default: %(default)s)")
    ap.add_argument("--api-model", default=DEFAULT_CHAT,
                    help="chat model every chat token is priced at (default: %(default)s)")
    ap.add_argument("--api-embedder", default=DEFAULT_EMBEDDER,
                    help="embedding model every embedding token is priced at (default: %(default)s)")
    ap.add_argument("--judge-matrix", type=Path, action="append", default=[], metavar="JSON",
                    help="a judge_matrix.json (or its folder) from `memeval judge-matrix`, shown as a table and a "
                         "figure in the section of the runs it re-judged (repeatable)")
    args = ap.parse_args(argv)
    try:
        prices = load_reference(args.prices, args.api_model, args.api_embedder)
    except (ValueError, OSError) as exc:
        print(f"error: price table: {exc}", file=sys.stderr)
        return 2
    try:
        md, html = build_report(args.runs, args.out, args.reference, allow_degenerate=args.allow_degenerate,
                                prices=prices, judge_matrices=args.judge_matrix)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(md.read_text(encoding="utf-8"))
    print(f"wrote {md} and {html}")
    return 0

