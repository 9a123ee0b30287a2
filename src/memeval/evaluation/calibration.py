"""Judge calibration: the false-accept rates `memeval judge-check --known-wrong` measured.

A measurement lives in one JSON file committed with the code, `conf/calibration/
judge_calibration.json` (`MEMEVAL_JUDGE_CALIBRATION` names another), never in a run folder: a
run's numbers (metrics.json) stay what its artifacts give, a table and the health stage name the
rate measured for its judge, and a fresh clone reads the same rates as the machine that measured
them (so the table a bundle's replay writes does not depend on the machine). An entry is
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

from memeval.paths import CONF

DEFAULT_PATH = CONF / "calibration" / "judge_calibration.json"
GROUNDED = ("grounded", "grounding_only")  # the configurations a grounding version changes
KEY = ("dataset", "judge_model", "judge_prompt", "configuration", "grounding_version")


def calibration_path() -> Path:
    env = os.environ.get("MEMEVAL_JUDGE_CALIBRATION")
    return Path(env).expanduser() if env else DEFAULT_PATH


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


def measured_for(dataset: str, meta: dict[str, Any], judge_prompt: Any, credit: str) -> dict[str, Any] | None:
    """The calibration entry of a run's judge (model, prompt, credit, grounding version), if any.
    `meta`: meta.json or metrics.json `provenance` (both name judge_model and the protocol)."""
    raw = meta.get("protocol")
    proto = raw if isinstance(raw, dict) else {}
    if not isinstance(judge_prompt, str):
        return None
    return lookup(dataset, str(meta.get("judge_model", "?")), judge_prompt, credit,
                  proto.get("grounding_version", 1))


def overall_rate(entry: dict[str, Any]) -> tuple[float, int] | None:
    """(false-accept rate over every kind, known-wrong answers judged) of an entry."""
    parts = [m for m in entry.get("false_accept", {}).values() if m.get("rate") is not None and m.get("n")]
    n = sum(int(m["n"]) for m in parts)
    return (sum(m["rate"] * m["n"] for m in parts) / n, n) if n else None


def header_line(dataset: str, meta: dict[str, Any], judge_prompt: Any, credit: str) -> str:
    """The table header's line on the judge's measured false-accept rate (or that there is none)."""
    entry = measured_for(dataset, meta, judge_prompt, credit)
    if entry is None:
        return (f"- judge false-accept rate: not measured (`memeval judge-check --dataset {dataset} "
                "--known-wrong` measures it)")
    rates = "; ".join(f"{m['rate']:.3f} on {m['n']} known-wrong answers (kind {kind})"
                      for kind, m in sorted(entry["false_accept"].items()) if m.get("rate") is not None)
    return (f"- judge false-accept rate ({credit} credit): {rates} (judge-check of "
            f"{str(entry.get('measured_at', '?'))[:10]})")
