"""Judge calibration: the false-accept rates `memeval judge-check --known-wrong` measured.

A measurement lives in one JSON file per machine, `$MEMEVAL_HOME/judge_calibration.json`
(`MEMEVAL_JUDGE_CALIBRATION` names another), beside the response cache whose calls it was made
with, never in a run folder: a run's numbers (metrics.json) stay what its artifacts give, and a
table names the rate measured for its judge, wherever and whenever the check ran. An entry is
keyed by dataset, judge model, judge prompt, configuration (raw / grounded / grounding_only /
token_f1) and, for the grounded ones, grounding version; a new measurement replaces the entry
with its key. A table whose judge has no entry says "false-accept rate: not measured".
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from model_access.local_models import memeval_home

FILE_NAME = "judge_calibration.json"
GROUNDED = ("grounded", "grounding_only")  # the configurations a grounding version changes
KEY = ("dataset", "judge_model", "judge_prompt", "configuration", "grounding_version")


def calibration_path() -> Path:
    env = os.environ.get("MEMEVAL_JUDGE_CALIBRATION")
    return Path(env).expanduser() if env else memeval_home() / FILE_NAME


def read_entries(path: Path | None = None) -> list[dict[str, Any]]:
    path = path or calibration_path()
    if not path.exists():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    return list(data.get("entries", [])) if isinstance(data, dict) else []


def _key(entry: dict[str, Any]) -> tuple[Any, ...]:
    version = entry.get("grounding_version") if entry.get("configuration") in GROUNDED else None
    return tuple(version if k == "grounding_version" else entry.get(k) for k in KEY)


def record(entries: list[dict[str, Any]], path: Path | None = None) -> Path:
    """Add or replace these entries (each with the KEY fields and `false_accept`); atomic write."""
    path = path or calibration_path()
    stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    new = {_key(e): _finite({**e, "measured_at": e.get("measured_at", stamp)}) for e in entries}
    kept = [e for e in read_entries(path) if _key(e) not in new]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"format": 1, "entries": kept + list(new.values())}, indent=1) + "\n",
                   encoding="utf-8")
    tmp.replace(path)
    return path


def _finite(obj: Any) -> Any:
    """NaN (a rate over no answers) as null: the file stays strict JSON."""
    if isinstance(obj, float) and obj != obj:
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def lookup(dataset: str, judge_model: str, judge_prompt: str, configuration: str,
           grounding_version: int | None = None, path: Path | None = None) -> dict[str, Any] | None:
    want = _key({"dataset": dataset, "judge_model": judge_model, "judge_prompt": judge_prompt,
                 "configuration": configuration, "grounding_version": grounding_version})
    found = [e for e in read_entries(path) if _key(e) == want]
    return found[-1] if found else None


def header_line(dataset: str, meta: dict[str, Any], judge_prompt: Any, credit: str) -> str:
    """The table header's line on the judge's measured false-accept rate (or that there is none)."""
    proto = meta.get("protocol") if isinstance(meta.get("protocol"), dict) else {}
    entry = None
    if isinstance(judge_prompt, str):
        entry = lookup(dataset, str(meta.get("judge_model", "?")), judge_prompt, credit,
                       proto.get("grounding_version", 1))
    if entry is None:
        return (f"- judge false-accept rate: not measured (`memeval judge-check --dataset {dataset} "
                "--known-wrong` measures it)")
    rates = "; ".join(f"{m['rate']:.3f} on {m['n']} known-wrong answers (kind {kind})"
                      for kind, m in sorted(entry["false_accept"].items()) if m.get("rate") is not None)
    return (f"- judge false-accept rate ({credit} credit): {rates} (judge-check of "
            f"{str(entry.get('measured_at', '?'))[:10]})")
