"""`memeval explore RUN_DIR... --out DIR`: the results explorer, a static site (evaluation/explore/).

Open DIR/index.html in a browser (from disk; no server): an overview (comparison table with
health marks, charts, judge-sensitivity matrix where a judge_matrix.json is found), a question
table filterable by group, failure label, method-vs-method outcome, flags and text, and a page
per question with every method's context, answer and judges' credit, two chosen methods side by
side. A method picker chooses the methods shown (the question table shows the columns that fit
the window unless told), a toggle hides runs that failed a health check, and URLs name methods:
#/questions?a=embedding_rag&rel=rw&b=gsw, #/q?id=...&a=gsw&b=seem, ?methods=gsw,seem, ?hide=failed.
Every ± and error bar is the report's: ± 1 bootstrap std.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str], prog: str = "memeval explore") -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="scored run folders (runs/<dataset>/<method>-<hash>)")
    ap.add_argument("--out", type=Path, default=Path("explorer"), help="output folder (default: ./explorer)")
    ap.add_argument("--judge-matrix", type=Path, default=None,
                    help="a judge_matrix.json (default: one found beside or inside the run folders)")
    ap.add_argument("--title", default=None, help="the page title (default: the datasets' names)")
    args = ap.parse_args(argv)
    from memeval.evaluation.explore import ExploreError, build_site

    try:
        site = build_site(args.runs, args.out, judge_matrix=args.judge_matrix, title=args.title)
    except ExploreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for name, n in site.datasets.items():
        print(f"{name}: {n['runs']} runs, {n['questions']} questions")
    print(f"wrote {site.out / 'index.html'}: {len(site.files)} files, {site.total_bytes / 1e6:.2f} MB "
          f"(open it from disk; no server needed)")
    return 0
