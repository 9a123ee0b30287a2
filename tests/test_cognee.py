"""cognee through its official package (embedded SQLite, LanceDB, Ladybug), against the scripted server.

The end-to-end tests need the cognee environment (`python scripts/setup_baselines.py cognee`)
and are skipped with that instruction when it is missing. They drive run.py as a user would and
check: passages from at most `cap` sessions reach the answer, the graph sections are declared
uncapped, a rerun and a rebuild of the index from the cache make no call (no clock in a prompt),
nothing left the machine, and the index health counts edges per session.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli, scripted_overrides

from memeval.methods.external import envs
from memeval.methods.external.cognee import cognee_counters

needs_env = pytest.mark.skipif(envs.find_env("cognee") is None,
                               reason="cognee environment not set up: python scripts/setup_baselines.py cognee")


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _run_dir(tmp: Path, dataset: str) -> Path:
    (run,) = sorted((tmp / "runs" / dataset).glob("cognee-*"))
    return run


@needs_env
def test_cognee_locomo_end_to_end_rerun_and_rebuild_from_cache(scripted, tmp_path, data_dir) -> None:
    """conv-43 whole (29 sessions, 10 questions): with cognee's random ids a rebuild changed 3 of
    these 10 contexts (measured), so this is the size at which the rebuild check can fail."""
    args = ["method=cognee", "dataset=locomo", "dataset.loader.conversations=[conv-43]", "subset.n=10",
            "method.setup=require", *scripted_overrides(scripted, tmp_path, data_dir)]
    first = run_cli(args, timeout=1500)
    assert first.returncode == 0, first.stderr[-4000:]
    run = _run_dir(tmp_path, "locomo")
    preds = _lines(run / "predictions.jsonl")
    assert len(preds) == 10
    cap = int(json.loads((run / "meta.json").read_text())["context_cap"].split()[0])
    for p in preds:
        assert "## Relevant passages" in p["context_text"], p["context_text"][:300]
        assert 1 <= len(p["context_chapters"]) <= cap, p["context_chapters"]
        assert p["cap_audit"]["uncapped_tokens"] > 0, "entity and fact sections are declared uncapped"
        assert "egress_refused" not in p["retrieval"]
    assert any(p["retrieval"]["dropped_units"] for p in preds), "the cap cut cognee's passages (10 per lane)"
    info = json.loads((run / "index.json").read_text())["corpora"][0]["info"]
    sessions = info["index"]["episodes"]
    assert [e["unit"] for e in sessions] == [str(i) for i in range(1, 30)], "sessions in order"
    assert all(e["structured_calls"] >= 2 and e["facts"] > 0 for e in sessions), sessions[0]
    assert info["egress_refused"] == 0 and info["package"]["telemetry_disabled"] == "1"
    checks = {c["name"]: c for c in json.loads((run / "health.json").read_text())["checks"]}
    assert checks["structured_call_failures"]["value"] == 0.0, checks["structured_call_failures"]
    assert "29 units" in checks["units_empty"]["message"]

    calls = scripted.count()
    second = run_cli(args, timeout=1500)
    assert second.returncode == 0, second.stderr[-4000:]
    assert scripted.count() == calls and "new model calls this invocation: 0" in second.stdout

    index_folder = Path(json.loads((run / "index.json").read_text())["index_folder"])
    shutil.rmtree(index_folder)  # a bundle replay rebuilds the stores from the calls alone
    shutil.rmtree(run)
    third = run_cli(args, timeout=1500)
    assert third.returncode == 0, third.stderr[-4000:]
    assert scripted.count() == calls, ("a rebuild sent prompts the first build did not (a clock or an order in "
                                       "a prompt): " + json.dumps(scripted.requests[calls:], default=str)[:3000])
    again = _lines(_run_dir(tmp_path, "locomo") / "predictions.jsonl")
    assert [(p["context_text"], p["answer"]) for p in again] == [(p["context_text"], p["answer"]) for p in preds]


@needs_env
@pytest.mark.parametrize("dataset,extra", [
    ("epbench20", ["subset.index_units=3", "subset.n=2"]),
    ("longmemeval_oracle", ["subset.n=1"]),
])
def test_cognee_chapters_and_longmemeval_sessions(dataset, extra, scripted, tmp_path, data_dir) -> None:
    res = run_cli(["method=cognee", f"dataset={dataset}", "method.setup=require", *extra,
                   *scripted_overrides(scripted, tmp_path, data_dir)], timeout=1500)
    assert res.returncode == 0, res.stderr[-4000:]
    run = _run_dir(tmp_path, dataset)
    for corpus in json.loads((run / "index.json").read_text())["corpora"]:
        sessions = corpus["info"]["index"]["episodes"]
        assert not corpus["info"]["index"]["failed_episodes"] and all(e["structured_calls"] for e in sessions)
        # EpBench chapters carry no timestamp: each is dated by the date its text writes (2024-2026)
        assert {e["time_source"] for e in sessions} == ({"text"} if dataset.startswith("epbench") else {"unit"})
        assert all(e["reference_time"] > "2020" for e in sessions)
    for p in _lines(run / "predictions.jsonl"):
        assert p["context_text"].strip() and "egress_refused" not in p["retrieval"]
    if dataset.startswith("epbench"):
        # two more processes load the same index and search it again (a resumed or repeated run):
        # cognee's query log made the second one fail on a duplicate query id
        for _ in range(2):
            again = run_cli(["method=cognee", f"dataset={dataset}", "method.setup=require", *extra,
                             *scripted_overrides(scripted, tmp_path, data_dir)], timeout=1500)
            assert again.returncode == 0, again.stderr[-4000:]
            assert "new model calls this invocation: 0" in again.stdout


@needs_env
def test_the_guard_catches_cognee_telemetry_when_it_is_left_on(tmp_path) -> None:
    """The no-egress check can fail: with TELEMETRY_DISABLED unset, cognee's send_telemetry calls
    home and the guard records it; with TELEMETRY_DISABLED=1, as the worker runs, nothing."""
    probe = ("import asyncio\nfrom cognee.shared import utils\n"
             "async def main():\n"
             "    utils.send_telemetry('memeval probe', 'probe-user', {})\n"
             "    await asyncio.gather(*list(utils._TELEMETRY_TASKS), return_exceptions=True)\n"
             "asyncio.run(main())\n")
    env_path = envs.find_env("cognee")
    assert env_path is not None
    found = {}
    for disabled in ("", "1"):
        log = tmp_path / f"egress-{disabled or 'on'}.jsonl"
        extra = {"TELEMETRY_DISABLED": disabled} if disabled else {}
        subprocess.run([str(envs.env_python(env_path)), "-c", probe], env=envs.worker_env(env_path, extra, egress_log=log),
                       cwd=tmp_path, timeout=300, capture_output=True, check=False)
        found[disabled] = {a["target"] for a in envs.egress_attempts(log)}
    assert found[""], "with telemetry on, cognee tried to connect somewhere"
    assert found["1"] == set(), found


# -- no package environment needed ----------------------------------------------------------------
def test_cognee_counters_edges_per_session_and_failed_calls(tmp_path) -> None:
    sessions = [
        {"unit": "1", "entities": ["Gina", "Jon"], "facts": 4, "structured_calls": 2, "chat_failed": 0,
         "schema_invalid": 0},
        {"unit": "2", "entities": [], "facts": 0, "structured_calls": 2, "chat_failed": 1, "schema_invalid": 1,
         "error": "CognifyFailedError: ..."},
    ]
    (tmp_path / "index_done.json").write_text(json.dumps({"index": {"episodes": sessions}}))
    c = cognee_counters(tmp_path)
    assert c is not None and c.units == 2 and c.empty == {"edges": [1, 2], "entities": [1, 2]}
    assert c.extra["structured_calls"] == {"chat_attempts": 4, "chat_failed": 1, "schema_invalid": 1,
                                           "failed_units": 1}
