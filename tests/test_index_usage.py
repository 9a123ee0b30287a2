"""The index folder's own usage record, the credited Chronological Awareness order, LoCoMo's
headline question set, and NOTES.md's generated run facts."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from sweep_runs import run_dir, sweep_root

from memeval.evaluation.bundle import facts
from memeval.evaluation.conversations.locomo import LoCoMoProtocol
from memeval.evaluation.epbench.order import credited_mapping
from memeval.evaluation.epbench.protocol import EpBenchProtocol
from memeval.evaluation.runs.index_usage import (
    RECORD,
    read_index_usage,
    record_of_run,
    record_session,
)


def _call(model: str, p: int, c: int, cached: bool = True) -> dict:
    return {"model": model, "prompt_tokens": p, "completion_tokens": c, "cached": cached}


def test_the_build_session_wins_over_a_reuse_and_a_bundle_finds_its_copy(tmp_path) -> None:
    bundle = tmp_path / "bundle"
    run = bundle / "runs" / "locomo" / "seem-abc"
    run.mkdir(parents=True)
    (run / "index.json").write_text(json.dumps({"corpora": [{"corpus_id": "conv-30"}],
                                                "index_folder": "runs/_indexes/seem-123"}))
    (run / "usage.json").write_text(json.dumps({"stages": {"index": {"cached": {"calls": 3}}}}))
    store = bundle / "indexes" / "seem-123"  # where a bundle keeps the run's index artifacts
    build = [_call("llm", 100, 20, cached=False) for _ in range(5)] + [_call("emb", 10, 0)]
    record_session(store, "conv-30", build, "t0")
    reuse = [_call("emb", 0, 0) for _ in range(3)]
    record_session(store, "conv-30", reuse, "t1")
    record_session(store, "conv-30", reuse, "t2")  # the same figures again: not a new session
    record_session(store, "conv-30", [], "t3")  # nothing called: nothing recorded
    data = json.loads((store / RECORD).read_text())
    assert [e["at"] for e in data["corpora"]["conv-30"]] == ["t0", "t1"]
    u = read_index_usage(run)
    assert (u.calls, u.prompt_tokens, u.completion_tokens, u.source) == (6, 510, 100, "index record")
    assert u.by_model["llm"]["calls"] == 5 and u.sessions == 2 and not u.unrecorded
    # another dataset's run shares the index folder (same parameters): a bundle of this run ships
    # this run's corpora only (SEEM's LongMemEval bundle carried LoCoMo's conv-30 entry)
    record_session(store, "lme-q1", build, "t4")
    shipped = json.loads(record_of_run(run) or "{}")
    assert list(shipped["corpora"]) == ["conv-30"] and shipped["corpora"]["conv-30"] == data["corpora"]["conv-30"]
    (store / RECORD).unlink()
    assert record_of_run(run) is None
    u = read_index_usage(run)  # no record: this run's own calls, flagged as a gap (the folder exists)
    assert (u.calls, u.tokens, u.source, u.unrecorded) == (3, 0, "this run", True)


def test_the_index_stage_writes_the_record(tmp_path_factory) -> None:
    root = sweep_root(tmp_path_factory.mktemp("sweep"))
    run = run_dir(root, "embedding_rag")
    folder = Path(json.loads((run / "index.json").read_text())["index_folder"])
    data = json.loads((folder / RECORD).read_text())
    sessions = data["corpora"]["epbench20"]
    assert sessions and sessions[0]["calls"] > 0 and sessions[0]["by_model"]
    u = read_index_usage(run)
    assert u.recorded and u.calls == max(s["calls"] for s in sessions)


def _chrono(qid: str, credit: list[float], mapping: list[int]) -> dict:
    gold = ["Queensboro Bridge", "Washington Square Park", "Port Jefferson"]
    return {"question_id": qid, "bucket": "3-5", "get": "chronological", "gold": gold,
            "identified_items": list(gold), "matching_score": [1.0, 0.0, 0.0],
            "matching_score_grounded": credit, "n_pred_grounded": sum(1 for c in credit if c),
            "identified_items_grounded": [g for g, c in zip(gold, credit, strict=True) if c],
            "unsupported_items": [], "credited_absent_gold": [], "left_to_judge": [],
            "deterministic": {"matching_score": credit, "identified_items": [], "refusal": False},
            "order_mapping": mapping}


def test_order_counts_only_credited_items() -> None:
    assert credited_mapping([0, 1, 2], [0.0, 0.0, 0.0]) == [-1, -1, -1]
    assert credited_mapping([2, 0, 5], [0.0, 1.0, 0.5]) == [2, -1, -1]
    judgments = [_chrono("echo", [0.0, 0.0, 0.0], [0, 1, 2]), _chrono("right", [1.0, 1.0, 1.0], [0, 1, 2])]
    preds = [{"question_id": j["question_id"], "answer": "x"} for j in judgments]
    proto = EpBenchProtocol(credit="grounded", resamples=20)
    metrics = proto.metrics(judgments, preds)
    assert metrics["chronological_awareness"]["order"] == 1.0  # the score stage's (saved) reading
    shown = proto.shown_metrics(metrics, judgments, preds)["chronological_awareness"]
    assert shown["order"] == pytest.approx(0.5) and shown["order_uncredited"] == 1.0  # 1 of 2 complete
    assert metrics["chronological_awareness"]["order"] == 1.0  # metrics.json's value is not touched


def test_locomo_headline_scores_are_the_headline_categories() -> None:
    preds, judg = [], []
    for i, cat in enumerate([1, 2, 4, 4, 5, 5, 5]):
        preds.append({"question_id": f"q{i}", "category": cat, "gold": "Paris", "answer": "Paris",
                      "question": "Where?", "gold_units": [], "context_chapters": []})
        judg.append({"question_id": f"q{i}", "category": cat, "correct": 1, "grounded": True,
                     "judge_prompt": "locomo-judge-v2"})
    for with5, n in ((False, 4), (True, 7)):
        proto = LoCoMoProtocol(include_category_5=with5, resamples=10)
        metrics = proto.metrics(judg, preds)
        assert len(proto.headline_scores(judg, preds)) == metrics["overall"]["n"] == n
        assert len(proto.question_scores(judg, preds)) == 7  # the retrieval diagnostics still see all
        assert ("overall" in proto.group_caveats(metrics)) == with5
    assert LoCoMoProtocol().group_caveats({"judge_prompt": "locomo-judge-v1"}) == {}


def _run(run: Path, contexts: list[str]) -> None:
    run.mkdir(parents=True)
    (run / "meta.json").write_text(json.dumps({"method": run.name.split("-")[0]}))
    (run / "metrics.json").write_text(json.dumps({"n_judge_failed": 0}))
    (run / "index.json").write_text(json.dumps({"corpora": [
        {"corpus_id": "c", "seconds": 3, "stats": {"chunks": 170, "build_seconds": 9.5, "frame_failed": 1},
         "info": {"index": {"seconds": 2.0, "counts": {"entities": 27, "relationships": 7}}}}]}))
    (run / "predictions.jsonl").write_text("".join(
        json.dumps({"question_id": f"q{i}", "context_text": c, "context_tokens": len(c)}) + "\n"
        for i, c in enumerate(contexts)))


def test_notes_facts_come_from_the_run_folders_between_markers(tmp_path) -> None:
    _run(tmp_path / "gsw-1", ["text", " ", "", "more"])
    _run(tmp_path / "vanilla-2", ["all", "all"])
    block = facts.section([tmp_path / "gsw-1", tmp_path / "vanilla-2"])
    assert block.startswith(facts.BEGIN) and block.endswith(facts.END)
    assert "Empty contexts (blank text; package refusal strings are counted by `memeval health`): " \
           "gsw 2 of 4 (q1, q2)." in block
    assert "- gsw index: chunks 170, entities 27, relationships 7." in block  # no timings, no failures
    assert "gsw: frame_failed 1" in block and "Health not checked: gsw, vanilla." in block
    hand = "# Notes\n\nWhat broke.\n"
    once = facts.merge(hand, block)
    assert once.startswith(hand.rstrip("\n")) and once.count(facts.BEGIN) == 1
    again = facts.merge(once.replace("What broke.", "What broke, edited."), block.replace("2 of 4", "1 of 4"))
    assert again.count(facts.BEGIN) == 1 and "1 of 4" in again and "2 of 4" not in again
    assert "What broke, edited." in again
    # the hand-written part taken up to the block's heading keeps its opening marker, not its end:
    # the marker was written twice into three shipped NOTES.md before this
    cut = again.split("## Run facts")[0]
    assert cut.count(facts.BEGIN) == 1 and facts.END not in cut
    assert facts.merge(cut, block).count(facts.BEGIN) == 1
    empty = facts.facts(tmp_path / "vanilla-2")
    assert empty["empty"] == 0 and not math.isnan(empty["ctx_tokens"])
