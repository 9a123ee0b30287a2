"""`memeval label-check RUN_DIR... --labels FILE` (evaluation/label_check.py): each credit against hand labels."""

from __future__ import annotations


def main(argv: list[str]) -> int:
    from memeval.evaluation.label_check import main as label_check

    return label_check(argv)
