"""`memeval run method=gsw dataset=epbench200` (add -m for sweeps): one run, or a Hydra sweep.

Every argument is Hydra's (overrides, -m/--multirun, --cfg job, --help), exactly as
`python run.py ...` takes them; run.py is this command with its own conf/ folder.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from memeval.paths import CONF

CONF = CONF


def _task(cfg: Any) -> Path | dict | None:
    """One job: build, run the stages, score; a sweep's failed job reports and the sweep goes on."""
    from memeval.harness.pipeline import run
    from memeval.harness.sweep import in_multirun, job_failed
    from memeval.model_access.errors import ConfigError

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
    from memeval.harness.pipeline import current_run_dir

    where = f" in {current_run_dir()}" if current_run_dir() else ""
    print(f"\ninterrupted: finished questions are saved{where} and every model call made so far is "
          "cached; rerun the same command to resume (cached calls are free).", file=sys.stderr)
    return 130


def main(argv: list[str] | None = None, config_dir: Path = CONF) -> int:
    """Run Hydra on `argv` (default: sys.argv[1:]) with the configs in `config_dir`."""
    import hydra

    from memeval.harness.resolvers import register_resolvers
    from memeval.harness.schema import register_schemas
    from memeval.harness.sweep import exit_code

    from .names import check

    if problem := check(list(sys.argv[1:] if argv is None else argv), config_dir):  # before Hydra composes
        print(f"error: {problem}", file=sys.stderr)
        return 2
    register_resolvers()
    register_schemas(config_dir)  # with an option per installed plugin that has no file there
    if argv is not None:  # Hydra reads its arguments from sys.argv
        sys.argv = [sys.argv[0], *argv]
    hydra_main = hydra.main(config_path=str(config_dir), config_name="config", version_base="1.3")(_task)
    try:
        hydra_main()
    except KeyboardInterrupt:
        return interrupted()
    return exit_code()
