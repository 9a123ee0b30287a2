"""Sweeps (`python run.py -m ...`): a failed job is reported and the sweep goes on; at the end the
sweep folder gets the comparison report and local servers are stopped.

Each job leaves `<sweep dir>/<job num>/job.json` (its overrides, run folder or error), so the
end-of-sweep report also works when a launcher runs jobs in other processes.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig

_FAILED: list[str] = []


def in_multirun() -> bool:
    try:
        return HydraConfig.get().mode == RunMode.MULTIRUN
    except ValueError:  # not under Hydra (tests calling pipeline.run directly)
        return False


def sweep_name() -> str | None:
    """The sweep's folder name (its start time), used as the W&B group; None outside a sweep."""
    if not in_multirun():
        return None
    return Path(HydraConfig.get().sweep.dir).name


def job_failed(exc: BaseException) -> dict[str, Any]:
    """What a sweep job returns instead of raising, so Hydra's sweeper goes on to the next job."""
    from memeval.model_access.errors import ConfigError

    if not isinstance(exc, ConfigError):  # a bug, not a setting: keep the traceback for the user
        traceback.print_exception(exc, file=sys.stderr)
    overrides = " ".join(HydraConfig.get().overrides.task)
    print(f"error: job {HydraConfig.get().job.num} ({overrides}) failed: {exc}", file=sys.stderr)
    return {"error": f"{type(exc).__name__}: {exc}"}


def exit_code() -> int:
    """Non-zero after a sweep in which any job failed (run.py exits with it)."""
    return 1 if _FAILED else 0


class SweepReport(Callback):
    """Records each job's outcome; writes report.md/html into the sweep folder at the end."""

    def __init__(self, reference: str | None = None) -> None:
        self.reference = reference  # the method paired against (conf/config.yaml names it); None: none

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        _FAILED.clear()

    def on_job_end(self, config: DictConfig, job_return: Any, **kwargs: Any) -> None:
        if config.hydra.mode != RunMode.MULTIRUN:  # a single run's output dir is the working directory
            return
        value = getattr(job_return, "_return_value", None)
        out = Path(config.hydra.runtime.output_dir)
        record: dict[str, Any] = {"job": out.name, "overrides": list(job_return.overrides or [])}
        if isinstance(value, BaseException):
            record["error"] = f"{type(value).__name__}: {value}"
        elif isinstance(value, dict) and "error" in value:
            record["error"] = value["error"]
        elif value is not None:
            record["run_dir"] = str(value)
        out.mkdir(parents=True, exist_ok=True)
        (out / "job.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from memeval.model_access.local_server import close_all

        close_all()  # the servers were shared by the sweep's jobs; the sweep is over
        sweep_dir = Path(config.hydra.sweep.dir)
        jobs = [json.loads(p.read_text()) for p in sorted(sweep_dir.glob("*/job.json"),
                                                          key=lambda p: (len(p.parent.name), p.parent.name))]
        done = [j["run_dir"] for j in jobs if j.get("run_dir")]
        failed = [j for j in jobs if j.get("error")]
        _FAILED[:] = [" ".join(j["overrides"]) for j in failed]
        print(f"sweep: {len(done)} of {len(jobs)} job(s) finished", file=sys.stderr)
        for j in failed:
            print(f"  failed: job {j.get('job')}: {j['error']}", file=sys.stderr)
        if not done:
            return
        from memeval.evaluation.report import ReportError, build_report

        try:
            md, html = build_report([Path(d) for d in done], sweep_dir, auto_reference=self.reference)
        except ReportError as exc:
            print(f"sweep report not written: {exc}", file=sys.stderr)
            return
        if failed:
            with md.open("a", encoding="utf-8") as f:
                f.write("\n## Failed jobs\n\n" + "\n".join(f"- `{' '.join(j['overrides'])}`: {j['error']}"
                                                          for j in failed) + "\n")
        print(f"sweep report: {md} and {html}", file=sys.stderr)
