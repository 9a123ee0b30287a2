"""Graphiti (graphiti-core on embedded Kuzu) through its official package, against the scripted server.

The end-to-end tests need the graphiti environment (`python scripts/setup_baselines.py graphiti`)
and are skipped with that instruction when it is missing. They drive run.py as a user would and
check: the facts reach the answer within the cap, a rerun makes no call, a rebuild of the index
from the cache makes no call (no uuid or clock in a prompt), nothing left the machine (the egress
guard refused and recorded nothing), and the index health counts facts per session.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import run_cli, scripted_overrides

from memeval.datasets.types import Corpus, Unit
from memeval.methods.external import envs
from memeval.methods.external.episodes import dated_payload, is_dialogue, parse_time, text_date
from memeval.methods.external.graphiti import graphiti_counters

needs_env = pytest.mark.skipif(envs.find_env("graphiti") is None,
                               reason="graphiti environment not set up: python scripts/setup_baselines.py graphiti")


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _run_dir(tmp: Path, dataset: str) -> Path:
    (run,) = sorted((tmp / "runs" / dataset).glob("graphiti-*"))
    return run


@needs_env
def test_graphiti_locomo_end_to_end_rerun_and_rebuild_from_cache(scripted, tmp_path, data_dir) -> None:
    """conv-30 whole (19 sessions): with random uuids a rebuild sent 14-20 of its 213 prompts with
    candidates in another order (measured), so this is the size at which the rebuild check can fail."""
    args = ["method=graphiti", "dataset=locomo", "dataset.loader.conversations=[conv-30]", "subset.n=3",
            "method.setup=require", *scripted_overrides(scripted, tmp_path, data_dir)]
    first = run_cli(args, timeout=1500)
    assert first.returncode == 0, first.stderr[-4000:]
    run = _run_dir(tmp_path, "locomo")
    preds = _lines(run / "predictions.jsonl")
    assert len(preds) == 3
    cap = int(json.loads((run / "meta.json").read_text())["context_cap"].split()[0])
    for p in preds:
        assert p["context_text"].startswith("Facts from the memory graph"), p["context_text"][:200]
        assert 1 <= len(p["context_chapters"]) <= cap
        assert p["retrieval"]["package"] == "graphiti" and p["retrieval"]["facts"]
        assert all(f["units"] and f["valid_at"] for f in p["retrieval"]["facts"]), "facts carry sessions and times"
        assert "egress_refused" not in p["retrieval"]
        assert p["usage"]["retrieve"]["calls"] >= 1, "the question's embedding goes through the proxy"
        assert p["cap_audit"]["verbatim_beyond_units"] == []
    index = json.loads((run / "index.json").read_text())
    info = index["corpora"][0]["info"]
    episodes = info["index"]["episodes"]
    assert [e["unit"] for e in episodes] == [str(i) for i in range(1, 20)], "episodes in order"
    assert all(e["time_source"] == "unit" and e["source"] == "message" for e in episodes)
    assert sum(e["facts"] for e in episodes) > 0 and all(e["chat_attempts"] >= 2 for e in episodes)
    assert info["egress_refused"] == 0 and info["package"]["telemetry"] is False
    assert info["package"]["fulltext_indexes_created"], "the Kuzu fulltext indexes the search needs exist"
    usage = json.loads((run / "usage.json").read_text())
    assert usage["stages"]["index"]["fresh"]["calls"] > 0
    checks = {c["name"]: c for c in json.loads((run / "health.json").read_text())["checks"]}
    assert checks["structured_call_failures"]["value"] == 0.0, checks["structured_call_failures"]
    assert "units_empty" in checks and "19 units" in checks["units_empty"]["message"]

    calls = scripted.count()
    second = run_cli(args, timeout=1500)
    assert second.returncode == 0, second.stderr[-4000:]
    assert scripted.count() == calls and "new model calls this invocation: 0" in second.stdout

    shutil.rmtree(Path(index["index_folder"]))  # a bundle replay rebuilds the graph from the calls alone
    shutil.rmtree(run)
    third = run_cli(args, timeout=1500)
    assert third.returncode == 0, third.stderr[-4000:]
    assert scripted.count() == calls, ("a rebuild sent prompts the first build did not (a uuid, a clock or an "
                                       "order in a prompt): " + json.dumps(scripted.requests[calls:], default=str)[:3000])
    def same(rows: list[dict]) -> list[tuple]:
        return [(r["context_text"], r["context_chapters"], r["answer"], r["retrieval"]["facts"]) for r in rows]

    assert same(_lines(_run_dir(tmp_path, "locomo") / "predictions.jsonl")) == same(preds)


@needs_env
@pytest.mark.parametrize("dataset,extra,source", [
    ("epbench20", ["subset.index_units=3", "subset.n=2"], "text"),
    ("longmemeval_oracle", ["subset.n=1"], "message"),
])
def test_graphiti_chapters_and_longmemeval_sessions(dataset, extra, source, scripted, tmp_path, data_dir) -> None:
    args = ["method=graphiti", f"dataset={dataset}", "method.setup=require", *extra,
            *scripted_overrides(scripted, tmp_path, data_dir)]
    res = run_cli(args, timeout=1500)
    assert res.returncode == 0, res.stderr[-4000:]
    run = _run_dir(tmp_path, dataset)
    for corpus in json.loads((run / "index.json").read_text())["corpora"]:
        episodes = corpus["info"]["index"]["episodes"]
        assert {e["source"] for e in episodes} == {source}
        # EpBench chapters carry no timestamp: each is dated by the date its text writes (2024-2026)
        assert {e["time_source"] for e in episodes} == ({"text"} if dataset.startswith("epbench") else {"unit"})
        assert all(e["reference_time"] > "2020" for e in episodes)
        assert not corpus["info"]["index"]["failed_episodes"]
    assert all("egress_refused" not in p["retrieval"] for p in _lines(run / "predictions.jsonl"))


@needs_env
def test_the_guard_catches_graphiti_telemetry_when_it_is_left_on(tmp_path) -> None:
    """The no-egress check can fail: with telemetry on, the package calls PostHog and the guard
    records it (with GRAPHITI_TELEMETRY_ENABLED=false, as the worker runs, it records nothing)."""
    probe = ("from graphiti_core.telemetry.telemetry import capture_event\n"
             "capture_event('memeval_probe', {})\nimport posthog\nposthog.flush()\n")
    env_path = envs.find_env("graphiti")
    assert env_path is not None
    found = {}
    for enabled in ("true", "false"):
        log = tmp_path / f"egress-{enabled}.jsonl"
        env = envs.worker_env(env_path, {"GRAPHITI_TELEMETRY_ENABLED": enabled}, egress_log=log)
        subprocess.run([str(envs.env_python(env_path)), "-c", probe], env=env, cwd=tmp_path, timeout=120,
                       capture_output=True, check=False)
        found[enabled] = {a["target"] for a in envs.egress_attempts(log)}
    assert any("us.i.posthog.com" in t for t in found["true"]), found
    assert found["false"] == set(), found


# -- no package environment needed ----------------------------------------------------------------
def test_episode_times_from_each_dataset_format_and_synthetic_order() -> None:
    assert parse_time("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_time("10:37 am on 27 June, 2023") == datetime(2023, 6, 27, 10, 37, tzinfo=UTC)
    assert parse_time("2023/05/20 (Sat) 02:21") == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)
    assert parse_time("no date here") is None and parse_time(None) is None
    chapters = Corpus("book", (Unit("1", "Ann met Bo.", 0, title="Chapter 1"), Unit("2", "Bo left.", 1)))
    rows = dated_payload(chapters)
    assert [r["time_source"] for r in rows] == ["synthetic", "synthetic"]
    assert rows[0]["reference_time"] < rows[1]["reference_time"], "undated units keep their order"
    assert dated_payload(chapters) == rows, "the same times on every call: never the clock"
    assert not is_dialogue(chapters)


def test_an_undated_chapter_takes_the_date_its_text_writes() -> None:
    """Invented chapters: the first full date the text writes dates it (not a bare year or a
    relative phrase, not a day no calendar has); none found, the synthetic day by position; the
    rule of saved runs ('synthetic') ignores the text."""
    chapters = Corpus("book", (
        Unit("1", "In 1999 she was young. The lanterns were lit on March 3, 2024, at the pier.", 0),
        Unit("2", "Last week, the 14 November 2025 parade passed by.", 1),
        Unit("3", "The letter was dated February 30, 2024; nobody came.", 2),
        Unit("4", "It rained all day.", 3)))
    rows = dated_payload(chapters)
    assert [(r["reference_time"][:10], r["time_source"]) for r in rows] == [
        ("2024-03-03", "text"), ("2025-11-14", "text"), ("2000-01-03", "synthetic"), ("2000-01-04", "synthetic")]
    assert text_date("It happened on 7 May 2024 and again on June 1, 2025.") == datetime(2024, 5, 7, tzinfo=UTC)
    assert {r["time_source"] for r in dated_payload(chapters, "synthetic")} == {"synthetic"}
    with pytest.raises(ValueError, match="episode_dates"):
        dated_payload(chapters, "clock")
    assert is_dialogue(Corpus("c", (Unit("1", "Ann: hi\n\nBo: hello there", 0, "8 May, 2023"),)))


def test_graphiti_counters_facts_per_session_and_failed_calls(tmp_path) -> None:
    episodes = [
        {"unit": "1", "entities": ["Gina", "Jon"], "entities_not_in_text": [], "facts": 3,
         "chat_attempts": 5, "chat_failed": 0, "schema_invalid": 0},
        {"unit": "2", "entities": ["Gina", "Gamecube"], "entities_not_in_text": ["Gamecube"], "facts": 0,
         "chat_attempts": 4, "chat_failed": 1, "schema_invalid": 1},
        {"unit": "3", "entities": [], "facts": 0, "chat_attempts": 4, "chat_failed": 4, "schema_invalid": 0,
         "error": "ValidationError: ..."},
    ]
    (tmp_path / "index_done.json").write_text(json.dumps({"index": {"episodes": episodes}}))
    c = graphiti_counters(tmp_path)
    assert c is not None and c.units == 3
    assert c.empty == {"facts": [2, 3], "entities": [1, 3]}
    assert c.example_copies == 1 and c.copy_samples == ["Gamecube"], "a prompt example the session never says"
    assert c.extra["structured_calls"] == {"chat_attempts": 13, "chat_failed": 5, "schema_invalid": 1,
                                           "failed_units": 1}

    from omegaconf import OmegaConf

    from memeval.evaluation.health.index import index_checks

    th = OmegaConf.to_container(OmegaConf.load(Path(__file__).resolve().parents[1] / "conf/health/default.yaml"))
    checks = {k.name: k for k in index_checks({"extracts": True, "corpora": {"c": c.to_dict()}}, th["index"])}
    failed = checks["structured_call_failures"]
    assert failed.status == "fail" and failed.value == round(6 / 13, 4)
    assert "1 units failed to ingest" in failed.message
