"""`memeval compare RUN_DIR... [--reference RUN_DIR] [--out table.md]` (evaluation/compare.py)."""

from __future__ import annotations


def main(argv: list[str]) -> int:
    from memeval.evaluation.compare import main as compare

    return compare(argv)
