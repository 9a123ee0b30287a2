"""SEEM end to end through run.py against the scripted server: LoCoMo with a rerun that makes
no request, the index summary in index.json, per-question intermediate outputs under the cap;
and one short run on each other dataset family (LongMemEval-oracle, the EpBench book)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli, scripted_overrides

NEEDS = {"locomo": "locomo/locomo10.json", "longmemeval_oracle": "longmemeval/longmemeval_oracle.json",
         "epbench20": "epbench"}


def _run(scripted, tmp: Path, data_dir: Path, dataset: str, *extra: str) -> tuple[Path, str]:
    if not (data_dir / NEEDS[dataset]).exists():
        pytest.skip(f"{NEEDS[dataset]} missing: run `python scripts/fetch_data.py`")
    done = run_cli(["method=seem", f"dataset={dataset}", *scripted_overrides(scripted, tmp, data_dir), *extra],
                   timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = sorted((tmp / "runs" / dataset).glob("seem-*"))
    return run, done.stdout


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_locomo_end_to_end_and_rerun_makes_no_call(scripted, tmp_path, data_dir) -> None:
    run, _ = _run(scripted, tmp_path, data_dir, "locomo", "subset.n=5")
    n_first = scripted.count()
    kinds = [m for r in scripted.requests for m in ("[SEEM:frame]", "[SEEM:facts]", "[SEEM:fuse-judge]")
             if m in json.dumps(r["body"])]
    assert {"[SEEM:frame]", "[SEEM:facts]", "[SEEM:fuse-judge]"} <= set(kinds)
    index = json.loads((run / "index.json").read_text())
    for c in index["corpora"]:
        s = c["stats"]
        assert s["frames_before_fusion"] == s["passages"] == c["units"]  # one passage per session
        assert 0 < s["frames_after_fusion"] <= s["frames_before_fusion"]
        assert s["fusion"]["judged"] >= s["fusion"]["merged"] and s["graph_nodes"] > 0 and s["graph_edges"] > 0
        assert s["build_seconds"] > 0
    preds = _lines(run / "predictions.jsonl")
    assert len(preds) == 5
    for p in preds:
        r = p["retrieval"]
        assert 1 <= len(p["context_chapters"]) <= 5  # the LoCoMo cap: 5 sessions
        assert {"retrieved", "expanded_passages", "dropped_passages", "frames_shown"} <= set(r)
        assert all({"frame", "rrf", "ranks"} <= set(x) for x in r["retrieved"])
        assert "## Source passages (in passage order)" in p["context_text"] and "### Session" in p["context_text"]
        assert sorted(p["context_chapters"], key=int) == p["context_chapters"]
    again = run_cli(["method=seem", "dataset=locomo", "subset.n=5", *scripted_overrides(scripted, tmp_path, data_dir)])
    assert again.returncode == 0, again.stderr[-2000:]
    assert scripted.count() == n_first and "new model calls this invocation: 0" in again.stdout


@pytest.mark.parametrize(("dataset", "extra"), [("longmemeval_oracle", ["subset.n=3"]),
                                                ("epbench20", ["subset.n=2", "method.max_passages=6"])])
def test_other_datasets_run(scripted, tmp_path, data_dir, dataset, extra) -> None:
    run, _ = _run(scripted, tmp_path, data_dir, dataset, *extra)
    preds = _lines(run / "predictions.jsonl")
    assert preds and all(p["context_text"] for p in preds)
    index = json.loads((run / "index.json").read_text())
    if dataset == "epbench20":  # chapters have no date: the prompt says so, the context shows titles
        assert index["corpora"][0]["stats"]["passages"] == 6
        asked = [r["body"]["messages"][-1]["content"] for r in scripted.requests
                 if "[SEEM:frame]" in json.dumps(r["body"])]
        assert asked and all(a.startswith("Passage date: unknown") for a in asked)
        assert all("### Chapter" in p["context_text"] for p in preds)
