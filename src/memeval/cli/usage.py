"""`memeval usage RUN_DIR` (harness/usage_cli.py): usage.json rebuilt from usage.jsonl, e.g. after a kill."""

from __future__ import annotations


def main(argv: list[str]) -> int:
    from memeval.harness.usage_cli import main as usage

    return usage(argv)
