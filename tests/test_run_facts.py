"""`memeval audit run-facts` (evaluation/bundle/audits/run_facts.py): the build-notes figures come from the run folder's own files."""

from __future__ import annotations

import json
from pathlib import Path


def _load():
    from memeval.evaluation.bundle.audits import run_facts

    return run_facts


def _write(run: Path) -> None:
    run.mkdir()
    (run / "meta.json").write_text(json.dumps({"method": "gsw"}))
    (run / "metrics.json").write_text(json.dumps({"n_judge_failed": 1}))
    (run / "usage.json").write_text(json.dumps({"stages": {
        "index": {"fresh": {"calls": 7}, "cached": {"calls": 3}}, "answer": {"fresh": {"calls": 2}}}}))
    (run / "index.json").write_text(json.dumps({"corpora": [
        {"seconds": 60.5, "stats": {"operator_failed": 2, "chunks": 9, "guard": {"x_failed": 1}}},
        {"seconds": 30, "stats": {"operator_failed": 1}}]}))
    preds = [{"question_id": "q1", "context_text": "some text", "context_tokens": 30, "cap_audit": {"verbatim_beyond_units": ["9"]}},
             {"question_id": "q2", "context_text": "  ", "context_tokens": 0, "retrieval": {"truncated": True}}]
    (run / "predictions.jsonl").write_text("\n".join(json.dumps(p) for p in preds) + "\n")


def test_facts_read_from_the_run_folder(tmp_path: Path) -> None:
    run = tmp_path / "gsw-abc"
    _write(run)
    f = _load().facts(run)
    assert f["index_s"] == 90.5 and f["index_calls"] == (7, 3) and f["answer_calls"] == (2, 0)
    assert f["judge_calls"] == (0, 0) and f["ctx_tokens"] == 15
    assert (f["empty"], f["truncated"], f["judge_failed"], f["beyond_cap"]) == (1, 1, 1, 1)
    assert f["failures"] == {"operator_failed": 3, "guard.x_failed": 1}  # summed over corpora, nested kept


def test_run_facts_name_the_experiment_and_an_indexing_model_of_its_own(tmp_path: Path) -> None:
    from memeval.evaluation.bundle.facts import section

    old, new = tmp_path / "gsw-old", tmp_path / "hipporag2-new"
    _write(old)
    _write(new)
    assert "Experiment" not in section([old]) and "Indexing model" not in section([old])  # older runs read as before
    (new / "meta.json").write_text(json.dumps({
        "method": "hipporag2", "answer_model": "gpt-4o", "index_model": "gpt-4o-mini",
        "experiment": {"name": "paper", "deviations": ["embedder e, not the reference's nv"]}}))
    text = section([old, new])
    assert "- Experiment: paper; deviations from its reference: hipporag2: embedder e, not the reference's nv." in text
    assert "- Indexing model (not the answering model): hipporag2 gpt-4o-mini." in text


def test_a_packages_own_failed_calls_reach_the_failure_column(tmp_path: Path) -> None:
    """Graphiti's worker records its failures under info.index (the real 1.5B run: 8 edge replies
    cut, 2 episodes skipped); the column read only `stats` and said 'none counted'."""
    from memeval.evaluation.bundle.facts import facts

    run = tmp_path / "graphiti-abc"
    _write(run)
    (run / "index.json").write_text(json.dumps({"corpora": [{"seconds": 5, "info": {"index": {
        "failed_episodes": ["6", "7"], "totals": {"chat_attempts": 59, "chat_failed": 8},
        "episodes": [{"unit": "6", "chat_failed": 4}, {"unit": "7", "chat_failed": 4}]}}}]}))
    assert facts(run)["failures"] == {"totals.chat_failed": 8}  # the totals, not the episodes again
