"""python -m evaluation.report (memeval report) RUN_DIR [RUN_DIR ...] [--reference RUN_DIR] [--out DIR]

Writes DIR/report.md, DIR/report.html (self-contained) and DIR/figures/*.png from run folders:
EpBench F1 by cue bucket (GSW Table 2 shape) with P/R, Simple Recall and Chronological
Awareness; efficiency and cost (Table 3 shape); LoCoMo per category; LongMemEval per type; paired
bootstrap differences against --reference (same questions, judge, data version and policy only).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .build import ReportError, build_report


def main(argv: list[str] | None = None, prog: str = "python -m evaluation.report") -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="scored run folders (runs/<dataset>/<method>-<hash>)")
    ap.add_argument("--reference", type=Path, default=None,
                    help="paired bootstrap differences of every run of its dataset against this run")
    ap.add_argument("--out", type=Path, default=Path("report"), help="output folder (default: ./report)")
    args = ap.parse_args(argv)
    try:
        md, html = build_report(args.runs, args.out, args.reference)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(md.read_text(encoding="utf-8"))
    print(f"wrote {md} and {html}")
    return 0

