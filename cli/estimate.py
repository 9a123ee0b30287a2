"""`memeval estimate [Hydra overrides] [--json F]` (harness/estimate.py): a run's cost before any paid call."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from harness.estimate import main as estimate
    from model_access.errors import ConfigError

    try:
        return estimate(argv)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
