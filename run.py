"""Entry point: `python run.py method=gsw dataset=epbench200` (add -m for sweeps)."""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig

from harness.resolvers import register_resolvers
from harness.schema import register_schemas
from model_access.errors import ConfigError

register_resolvers()
register_schemas()


@hydra.main(config_path="conf", config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> Path | dict | None:
    from harness.pipeline import run
    from harness.sweep import in_multirun, job_failed

    try:
        return run(cfg)
    except Exception as exc:
        if in_multirun():  # this job fails with its message; the sweep goes on
            return job_failed(exc)
        if isinstance(exc, ConfigError):
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(2)
        raise


def interrupted() -> int:
    """Ctrl-C: one line saying what is kept and how to resume, no traceback."""
    from harness.pipeline import current_run_dir

    where = f" in {current_run_dir()}" if current_run_dir() else ""
    print(f"\ninterrupted: finished questions are saved{where} and every model call made so far is "
          "cached; rerun the same command to resume (cached calls are free).", file=sys.stderr)
    return 130


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(interrupted())
    from harness.sweep import exit_code

    sys.exit(exit_code())
