"""The W&B dashboard script builds its report offline, on the metric names tracking logs."""

from __future__ import annotations

import importlib.util
import json

import pytest
from conftest import ROOT

pytest.importorskip("wandb_workspaces")


def _script():
    spec = importlib.util.spec_from_file_location("wandb_dashboard", ROOT / "scripts" / "wandb_dashboard.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_dashboard_spec_bars_by_bucket_grouped_by_method(capsys) -> None:
    from memeval.harness.tracking import _flatten

    dash = _script()
    assert dash.main(["--entity", "someone", "--group", "2026-11-30_06-37-46", "--dry-run"]) == 0
    spec = json.loads(capsys.readouterr().out)
    (grid,) = [b for b in spec["blocks"] if "runsets" in b]
    (runset,) = grid["runsets"]
    assert runset["groupby"] == ["JobType"] and "2026-11-30_06-37-46" in runset["filters"]
    f1 = next(p for p in grid["panels"] if p["title"].startswith("F1 by cue bucket"))
    assert f1["metrics"] == [f"buckets/{b}/f1" for b in ("0", "1", "2", "3-5", "6+")]
    # every metric the panels plot is a key that harness.tracking logs for an EpBench run
    metrics = {"overall": {"f1": 0.5}, "simple_recall": 0.4,
               "buckets": {b: {"f1": 0.1, "precision": 0.2, "recall": 0.3} for b in dash.BUCKETS}}
    logged: dict = {}
    _flatten("", metrics, logged)
    plotted = {m for p in grid["panels"] for m in p["metrics"]}
    assert plotted <= set(logged), plotted - set(logged)
