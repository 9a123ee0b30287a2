"""`memeval estimate [Hydra overrides] [--json F]` (harness/estimate.py): a run's cost before any paid call."""

from __future__ import annotations

import sys

from .run import CONF


def main(argv: list[str]) -> int:
    from hydra.errors import HydraException

    from memeval.harness.estimate import main as estimate
    from memeval.model_access.errors import ConfigError

    from .names import check

    try:
        if problem := check(argv, CONF):  # an unknown method, dataset or parameter
            raise ConfigError(problem)
        return estimate(argv)
    except (ConfigError, HydraException) as exc:  # HydraException: a config Hydra cannot compose
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
