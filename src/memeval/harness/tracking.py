"""Experiment tracking (W&B), offline by default; never sees secrets (config is redacted first).

One W&B run per run folder: its id is derived from the folder (dataset + folder name), so a rerun
resumes the same W&B run instead of adding a duplicate. group = the sweep, job_type = the method.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Literal

from memeval.evaluation.presentation import Presentation
from memeval.evaluation.runs.folder import RunFolder, redact
from memeval.evaluation.runs.health_file import NOT_CHECKED, read_health
from memeval.evaluation.runs.presentation import presentation_for

SKIP_COLUMNS = {"context_text", "judge_raw", "retrieval"}  # large; they stay in the run folder


def _flatten(prefix: str, obj: Any, out: dict[str, Any]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _flatten(f"{prefix}/{k}" if prefix else str(k), v, out)
    elif isinstance(obj, int | float) and not isinstance(obj, bool):
        out[prefix] = obj


def wandb_run_id(run: RunFolder) -> str:
    """Stable across reruns and machines: <dataset>-<run folder name>, W&B-safe characters only."""
    return re.sub(r"[^A-Za-z0-9_.-]", "-", f"{run.root.parent.name}-{run.root.name}")[:64]


def _cell(v: Any) -> Any:
    """Lists and dicts as JSON strings so the W&B table keeps them (and shows them)."""
    if isinstance(v, list | dict):
        return json.dumps(v, ensure_ascii=False, default=str)
    return v


def question_rows(run: RunFolder) -> tuple[list[str], list[list[Any]]]:
    """Per-question columns: the prediction (minus the context text) joined with its judgment."""
    preds = {p["question_id"]: p for p in run.read_jsonl("predictions.jsonl")}
    judg = {j["question_id"]: j for j in run.read_jsonl("judgments.jsonl")}
    merged = [{**preds.get(q, {}), **judg.get(q, {})} for q in dict.fromkeys([*preds, *judg])]
    cols = list(dict.fromkeys(k for r in merged for k in r if k not in SKIP_COLUMNS))
    return cols, [[_cell(r.get(c)) for c in cols] for r in merged]


def group_tables(metrics: dict[str, Any], p: Presentation) -> dict[str, tuple[str, list[str], list[list[Any]]]]:
    """{metrics key: (label column, columns, rows)} for the groups the presentation declares
    (buckets, categories, question types), the label column named by their per-question field."""
    groups = p.group_metrics(metrics)
    if not groups or not p.groups:
        return {}
    label = p.group_field or p.groups
    stats = list(dict.fromkeys(s for g in groups.values() for s, v in g.items()
                               if isinstance(v, int | float) and not isinstance(v, bool)))
    return {p.groups: (label, [label, *stats], [[g, *(m.get(s) for s in stats)] for g, m in groups.items()])}


def health_summary(run: RunFolder) -> dict[str, str]:
    """The run's health as W&B summary fields (a column of the runs table): `health` is the
    status and first failing message, as every table shows it; `health_status` ok / warn / fail,
    or "not checked" when the run has no health.json yet."""
    health = read_health(run.root)
    if health is None:
        return {"health": NOT_CHECKED, "health_status": NOT_CHECKED}
    return {"health": health.mark(), "health_status": health.status}


WandbMode = Literal["online", "offline", "disabled", "shared"]  # what wandb.init takes (conf tracking.mode)


def log_to_wandb(run: RunFolder, mode: WandbMode, project: str, config: dict[str, Any],
                 metrics: dict[str, Any], usage: dict[str, Any], name: str,
                 entity: str | None = None, tags: list[str] | None = None,
                 group: str | None = None, job_type: str | None = None) -> str | None:
    """Config, metrics per bucket/category (summary + bar charts), usage, per-question table,
    and the run folder as an artifact."""
    if mode == "disabled":
        return None
    os.environ.setdefault("WANDB_SILENT", "true")
    import wandb

    wb = wandb.init(project=project, entity=entity, name=name, mode=mode, dir=str(run.root),
                    id=wandb_run_id(run), resume="allow", group=group, job_type=job_type,
                    config=redact(config), tags=tags or [], reinit="finish_previous",
                    settings=wandb.Settings(console="off"))
    try:
        p = presentation_for(metrics, run)
        flat: dict[str, Any] = {}
        _flatten("", {k: v for k, v in metrics.items() if k not in {"provenance", "agreement"}}, flat)
        _flatten("agreement", {k: v for k, v in (metrics.get("agreement") or {}).items()
                               if k != "disagreements"}, flat)
        _flatten("usage", usage.get("totals", {}), flat)
        wb.summary.update({**flat, **health_summary(run)})
        # one history step of per-group P/R/F1: W&B's default panel for a metric logged once is a
        # bar per run, so grouped runs (job_type = method) show one bar per method per bucket
        logged: dict[str, Any] = {k: v for k, v in flat.items() if k.split("/")[0] == p.groups
                                  and k.rsplit("/", 1)[-1] in p.stats}
        for key, (label, cols, rows) in group_tables(metrics, p).items():
            table = wandb.Table(columns=cols, data=rows)
            logged[f"{key}_table"] = table
            for stat in p.stats:
                if stat in cols:
                    logged[f"charts/{stat}_by_{label}"] = wandb.plot.bar(
                        table, label, stat, title=f"{stat} by {label}")
        cols, rows = question_rows(run)
        if rows:
            logged["per_question"] = wandb.Table(columns=cols, data=rows)
        wb.log(logged)
        artifact = wandb.Artifact(f"run-{wandb_run_id(run)}", type="run_folder",
                                  metadata=metrics.get("provenance") or {})
        for f in sorted(run.root.iterdir()):
            if f.is_file() and not f.name.endswith(".tmp"):
                artifact.add_file(str(f), name=f.name)
        wb.log_artifact(artifact)
        return wb.dir
    finally:
        wb.finish()
