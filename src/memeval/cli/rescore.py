"""`memeval rescore RUN_DIR... [--policy harsh]` (evaluation/rescore.py): metrics from artifacts alone."""

from __future__ import annotations


def main(argv: list[str]) -> int:
    from memeval.evaluation.rescore import main as rescore

    return rescore(argv)
