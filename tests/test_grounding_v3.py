"""Grounding version 3 (EpBench): precision counts every claim of the asked kind that the
model-free matcher finds, not only the claims the judge chose to list. Built from the v1
epbench20-local bundle's stored replies (tests/fixtures/v1_bundles), where the local judge left the
wrong claims out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import v1_bundle, v1_question

from memeval.evaluation.epbench.evidence import EPBENCH_GROUNDING_VERSIONS
from memeval.evaluation.epbench.matcher import checks
from memeval.evaluation.epbench.protocol import EpBenchProtocol
from memeval.evaluation.epbench.scoring import score_question
from memeval.evaluation.epbench.universe import Universe, load_universe

RUN = v1_bundle("epbench20-local") / "runs" / "epbench20"


@pytest.fixture(scope="module")
def universe(data_dir: Path) -> Universe:
    return load_universe(str(data_dir), 20)


def _regrounded(method: str, qid: str, universe: Universe, version: int) -> tuple[dict, dict]:
    p, j = v1_question("epbench20-local", method, qid)
    return j, checks(p["question"], j["retrieval_type"], j["gold"], j["matching_score"], j["identified_items"],
                     p["answer"], universe, version)


def _f1(j: dict, line: dict, policy: str = "lenient") -> float:
    return score_question(len(j["gold"]), line["matching_score_grounded"], line["n_pred_grounded"], policy).f1


def test_a_zero_cue_answer_naming_three_places_no_longer_scores_as_claiming_nothing(universe: Universe) -> None:
    # Vanilla, q23-865: gold is empty; the answer lists Karaoke Nights at three places; the judge listed none
    j, v2 = _regrounded("vanilla", "q23-865", universe, 2)
    assert j["gold"] == [] and j["identified_items"] == [] and v2["n_pred_grounded"] == 0
    assert _f1(j, v2) == 1.0  # what version 2 scored: a perfect "nothing to find"
    _, v3 = _regrounded("vanilla", "q23-865", universe, 3)
    assert v3["n_pred_grounded"] == 3 and v3["claims_beyond_judge"] == 3
    assert _f1(j, v3) == 0.0


def test_wrong_places_the_judge_left_out_count_against_precision(universe: Universe) -> None:
    # Vanilla, q16-245: one place credited, two wrong places in the answer the judge did not list
    j, v2 = _regrounded("vanilla", "q16-245", universe, 2)
    _, v3 = _regrounded("vanilla", "q16-245", universe, 3)
    assert v2["matching_score_grounded"] == v3["matching_score_grounded"] == [1.0]  # credit unchanged
    assert (v2["n_pred_grounded"], v3["n_pred_grounded"]) == (1, 3)
    assert _f1(j, v2, "harsh") == 1.0 and _f1(j, v3, "harsh") == pytest.approx(0.5)
    assert _f1(j, v3) == 1.0  # the lenient policy counts at most as many claims as there are gold items


def test_an_answer_whose_claims_the_judge_listed_is_scored_as_before(universe: Universe) -> None:
    # every judged line of the v1 GSW run whose matcher finds no more claims than the judge keeps its count
    run = next(RUN.glob("gsw-*"))
    preds = {p["question_id"]: p for p in map(json.loads, (run / "predictions.jsonl").read_text().splitlines())}
    same = 0
    for j in map(json.loads, (run / "judgments.jsonl").read_text().splitlines()):
        p = preds[j["question_id"]]
        args = (p["question"], j["retrieval_type"], j["gold"], j["matching_score"], j["identified_items"],
                p["answer"], universe)
        v2, v3 = checks(*args, 2), checks(*args, 3)
        if len((v2["deterministic"] or {}).get("identified_items") or []) <= v2["n_pred_grounded"]:
            assert v3["n_pred_grounded"] == v2["n_pred_grounded"] and v3["claims_beyond_judge"] == 0
            same += 1
    assert same >= 30


def test_version_3_is_accepted_and_unknown_versions_are_refused() -> None:
    assert EpBenchProtocol(grounding_version=3).grounding_version == 3
    with pytest.raises(ValueError, match="grounding_version must be one of"):
        EpBenchProtocol(grounding_version=max(EPBENCH_GROUNDING_VERSIONS) + 1)


def test_health_flags_a_run_scored_under_an_older_grounding_version(tmp_path: Path) -> None:
    from memeval.evaluation.conversations.locomo import LoCoMoProtocol
    from memeval.evaluation.health.judge import grounding_check
    from memeval.evaluation.runs.health_file import load_thresholds
    from memeval.harness.health import run_health

    limits = load_thresholds()["judge"]["grounding"]
    # the v1 bundle's runs were configured before grounding versions (read as version 1):
    # each says it is six behind, and how to mend it
    run = next(RUN.glob("vanilla-*"))
    (found,) = [c for c in run_health(run, load_thresholds()).checks if c.name == "judge_grounding"]
    assert (found.status, found.value) == ("warn", 6)
    assert "version 1," in found.message and "dataset.protocol.grounding_version=7" in found.message
    at = {"provenance": {"protocol": {"grounding_version": 7}}}
    assert grounding_check(at, EpBenchProtocol.current_grounding, limits).status == "ok"
    at2 = {"provenance": {"protocol": {"grounding_version": 5}}}
    assert grounding_check(at2, LoCoMoProtocol.current_grounding, limits).status == "ok"  # LoCoMo's current is 5
    none = grounding_check({"provenance": {"protocol": {}}}, None, limits)
    assert none.status == "not_measured" and none.value is None  # nothing to measure (issue 56)
    assert EpBenchProtocol().grounding_version == EpBenchProtocol.current_grounding == 7  # code default = shipped
