"""Grounding versions 4 and 5 (EpBench): on a 0-cue question, an answer that asserts something
counts at least one claim. Built from the epbench20-local bundle (v2)'s stored replies, where version
3 scored invented places and an unparsed date F1 1 because neither the judge nor the matcher (which
knows only the book's values) listed a claim, and version 4 still scored a bare wrong place F1 1
because it was two words beyond the question."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import bundled_question, bundled_run, judged_questions

from memeval.evaluation.epbench.matcher import checks
from memeval.evaluation.epbench.scoring import score_question
from memeval.evaluation.epbench.universe import Universe, load_universe

BUNDLE = "epbench20-local"
RUNS = Path(__file__).resolve().parents[1] / "results" / BUNDLE / "runs" / "epbench20"


@pytest.fixture(scope="module")
def universe(data_dir: Path) -> Universe:
    return load_universe(str(data_dir), 20)


def _lines(p: dict, j: dict, universe: Universe, versions: tuple[int, int] = (3, 4)) -> tuple[dict, dict]:
    args = (p["question"], j["retrieval_type"], j["gold"], j["matching_score"], j["identified_items"],
            p["answer"], universe)
    return checks(*args, versions[0]), checks(*args, versions[1])


def _f1(j: dict, line: dict) -> float:
    return score_question(len(j["gold"]), line["matching_score_grounded"], line["n_pred_grounded"], "lenient").f1


@pytest.mark.parametrize("method, qid, why", [
    ("graphrag", "q23-866", "three places the book never names"),
    ("graphrag", "q19-831", "a numbered list of invented events"),
    ("seem", "q6-853", "a date written '2024 March 23', which the date parser does not read"),
    ("seem", "q18-575", "a bare year, 2026, for a list of dates"),
])
def test_a_zero_cue_answer_that_asserts_something_no_longer_scores_as_nothing_to_find(
        method: str, qid: str, why: str, universe: Universe) -> None:
    p, j = bundled_question(BUNDLE, method, qid)
    assert j["gold"] == []
    v3, v4 = _lines(p, j, universe)
    assert v3["n_pred_grounded"] == 0 and _f1(j, v3) == 1.0, why  # what version 3 scored
    assert v4["n_pred_grounded"] == 1 and v4["zero_cue_assertion"] is True
    assert _f1(j, v4) == 0.0


def test_a_bare_book_value_the_question_did_not_name_is_a_claim_from_version_5(universe: Universe) -> None:
    # "which protagonists were at the Whitney Museum of American Art ...?" answered with a place:
    # two words beyond the question, so version 4 found no claim and scored the right "nothing"
    p, j = bundled_question(BUNDLE, "cognee", "q12-976")
    assert j["gold"] == [] and p["answer"].strip() == "The American Museum of Natural History"
    v4, v5 = _lines(p, j, universe, (4, 5))
    assert v4["zero_cue_assertion"] is False and _f1(j, v4) == 1.0
    assert v5["zero_cue_assertion"] is True and _f1(j, v5) == 0.0


def test_zero_cue_answers_that_decline_keep_their_score(universe: Universe) -> None:
    # every 0-cue answer in the bundle that version 3 scored right and version 5 does not change
    # must say it cannot find the material (version 4 let a bare wrong place through), or be one
    # that version 6 counts: an echo of the question's cue (lightrag q10-572: "Jazz Night" for Jazz
    # Night's places) or a chunk tag (gsw q6-852: "18.1" for dates)
    kept = caught_by_6 = 0
    for run in sorted(RUNS.iterdir()):
        for p, j in judged_questions(run, with_gold=False):
            v3, v5 = _lines(p, j, universe, (3, 5))
            if _f1(j, v3) == 1.0 and not v5["zero_cue_assertion"]:
                answer = p["answer"].lower()
                if not any(w in answer for w in ("not", "no ", "cannot", "can't", "none", "unable")):
                    _, v6 = _lines(p, j, universe, (5, 6))
                    assert v6["zero_cue_assertion"], answer
                    caught_by_6 += 1
                    continue
                kept += 1
    assert kept >= 10 and caught_by_6 <= 8


def test_questions_with_gold_items_score_as_under_version_3(universe: Universe) -> None:
    n = 0
    for p, j in judged_questions(bundled_run(BUNDLE, "seem"), with_gold=True):
        v3, v4 = _lines(p, j, universe)
        assert v4["n_pred_grounded"] == v3["n_pred_grounded"] and not v4["zero_cue_assertion"]
        n += 1
    assert n >= 100


def test_hand_made_zero_cue_answers(universe: Universe) -> None:
    q = "Reflect on the experiences of Mira Holt related to Lantern Parade. List all the unique locations."
    refusal = "I cannot find any Lantern Parade involving Mira Holt in the material."
    restated = "Mira Holt, Lantern Parade: locations."
    invented = "The Lantern Parade took place at Orchard Quay and the Old Mill Gardens."
    for answer, claims in ((refusal, 0), (restated, 0), (invented, 1), ("No places found.", 0)):
        line = checks(q, "Spaces", [], [], [], answer, universe, 4)
        assert line["n_pred_grounded"] == claims, answer
    dates = "Reflect on all events involving Mira Holt in 2025. Provide a list of all dates."
    for answer, claims in (("2027", 1), ("2025", 0), ("I cannot find any date in 2025.", 0)):
        assert checks(dates, "Times", [], [], [], answer, universe, 4)["n_pred_grounded"] == claims, answer
