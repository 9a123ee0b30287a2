"""`memeval report RUN_DIR... [--reference RUN_DIR] [--out DIR]` (evaluation/report/command.py)."""

from __future__ import annotations


def main(argv: list[str]) -> int:
    from memeval.evaluation.report.command import main as report

    return report(argv, prog="memeval report")
