"""Grounding version 6 (EpBench): on a 0-cue question, any answer that is not a decline counts one
claim. Built from the epbench20-local bundle (v2)'s stored replies, where version 5 scored F1 1 for
answers that only echo the question's own cue ("Escape Room Challenge" asked for that event's
locations) or give a chunk tag of the context ("18.1" for a list of dates): neither is three new
words, a new year or a book value the question lacks, so version 5 read them as "nothing to find"."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import bundled_question, bundled_run, judged_questions

from memeval.evaluation.epbench.matcher import checks
from memeval.evaluation.epbench.scoring import score_question
from memeval.evaluation.epbench.universe import Universe, load_universe

BUNDLE = "epbench20-local"
RUNS = Path(__file__).resolve().parents[1] / "results" / BUNDLE / "runs" / "epbench20"
DECLINES = ("not", "no ", "cannot", "can't", "none", "unable")


@pytest.fixture(scope="module")
def universe(data_dir: Path) -> Universe:
    return load_universe(str(data_dir), 20)


def _line(p: dict, j: dict, universe: Universe, version: int) -> dict:
    return checks(p["question"], j["retrieval_type"], j["gold"], j["matching_score"], j["identified_items"],
                  p["answer"], universe, version)


def _f1(j: dict, line: dict) -> float:
    return score_question(len(j["gold"]), line["matching_score_grounded"], line["n_pred_grounded"], "lenient").f1


@pytest.mark.parametrize("method, qid, answer", [
    ("gsw", "q10-568", "Escape Room Challenge"),   # asked for the event's locations
    ("gsw", "q21-934", "Coney Island"),            # asked for the protagonists at Coney Island
    ("gsw", "q6-852", "18.1"),                     # asked for dates: a chunk tag
    ("lightrag", "q10-572", "Jazz Night"),
    ("lightrag", "q16-764", "Tech Hackathon"),
])
def test_an_echo_or_a_tag_is_a_claim_from_version_6(method: str, qid: str, answer: str,
                                                    universe: Universe) -> None:
    p, j = bundled_question(BUNDLE, method, qid)
    assert j["gold"] == [] and p["answer"].strip() == answer
    v5, v6 = _line(p, j, universe, 5), _line(p, j, universe, 6)
    assert v5["zero_cue_assertion"] is False and _f1(j, v5) == 1.0  # what version 5 scored
    assert v6["zero_cue_assertion"] is True and v6["n_pred_grounded"] == 1 and _f1(j, v6) == 0.0


def test_every_zero_cue_answer_version_6_scores_right_declines(universe: Universe) -> None:
    # version 5 let up to a few restated cues through; version 6 leaves only declines at F1 1
    kept = 0
    for run in sorted(RUNS.iterdir()):
        for p, j in judged_questions(run, with_gold=False):
            if _f1(j, _line(p, j, universe, 6)) == 1.0:
                assert any(w in p["answer"].lower() for w in DECLINES), (run.name, p["answer"])
                kept += 1
    assert kept >= 20


def test_questions_with_gold_items_score_as_under_version_5(universe: Universe) -> None:
    n = 0
    for p, j in judged_questions(bundled_run(BUNDLE, "gsw"), with_gold=True):
        assert _line(p, j, universe, 6) == _line(p, j, universe, 5)
        n += 1
    assert n >= 100


def test_hand_made_zero_cue_answers(universe: Universe) -> None:
    q = "Reflect on the experiences of Mira Holt related to Lantern Parade. List all the unique locations."
    for answer, v5_claims, v6_claims in (
            ("I cannot find any Lantern Parade involving Mira Holt in the material.", 0, 0),
            ("No places found.", 0, 0),
            ("None.", 0, 0),
            ("Mira Holt was not seen at any Lantern Parade.", 0, 0),
            ("Lantern Parade", 0, 1),                      # the cue, echoed as a place
            ("Mira Holt, Lantern Parade: locations.", 0, 1),
            ("4.2", 0, 1)):                                # a tag of the context
        assert checks(q, "Spaces", [], [], [], answer, universe, 5)["n_pred_grounded"] == v5_claims, answer
        assert checks(q, "Spaces", [], [], [], answer, universe, 6)["n_pred_grounded"] == v6_claims, answer
