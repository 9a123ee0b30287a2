"""Experiment tracking (W&B), offline by default; never sees secrets (config is redacted first)."""

from __future__ import annotations

import os
from typing import Any

from .run_folder import RunFolder, redact


def _flatten(prefix: str, obj: Any, out: dict[str, Any]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _flatten(f"{prefix}/{k}" if prefix else str(k), v, out)
    elif isinstance(obj, int | float) and not isinstance(obj, bool):
        out[prefix] = obj


def log_to_wandb(run: RunFolder, mode: str, project: str, config: dict[str, Any],
                 metrics: dict[str, Any], usage: dict[str, Any], name: str,
                 entity: str | None = None, tags: list[str] | None = None) -> str | None:
    """Log config, metrics per bucket/category, usage and the per-question table."""
    if mode == "disabled":
        return None
    os.environ.setdefault("WANDB_SILENT", "true")
    import wandb

    wb = wandb.init(project=project, entity=entity, name=name, mode=mode, dir=str(run.root),
                    config=redact(config), tags=tags or [], reinit="finish_previous")
    try:
        flat: dict[str, Any] = {}
        _flatten("", {k: v for k, v in metrics.items() if k != "provenance"}, flat)
        _flatten("usage", usage.get("totals", {}), flat)
        wb.summary.update(flat)
        rows = run.read_jsonl("judgments.jsonl")
        preds = {p["question_id"]: p for p in run.read_jsonl("predictions.jsonl")}
        if rows:
            cols = sorted({k for r in rows for k, v in r.items() if isinstance(v, str | int | float)})
            cols = [c for c in cols if c not in {"judge_raw"}]
            table = wandb.Table(columns=[*cols, "answer", "context_tokens"])
            for r in rows:
                p = preds.get(r["question_id"], {})
                table.add_data(*[r.get(c) for c in cols], p.get("answer"), p.get("context_tokens"))
            wb.log({"per_question": table})
        return wb.dir
    finally:
        wb.finish()
