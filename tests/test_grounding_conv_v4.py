"""Conversation grounding version 4 (issue 56): two kinds of right answer version 2 vetoed.

- A list gold of clauses ("sprucing up his business plan, tweaking his pitch to investors, and
  working on an online platform") needed a key word of every part; an answer giving two of the
  three plans was WRONG whatever the judge said. Now more than half the parts do, while a list of
  names or things still needs every part.
- An answer that says the gold's leading phrase and nothing beyond the question ("creating a
  special experience for customers is key" for "it's the key to making them feel welcome and
  coming back") fell short of half the gold's key words. Now it states the gold.

Invented text of the same shapes; the last tests read the LoCoMo bundle and the held-out
known-wrong answers, where present: their false accepts may not rise.
"""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from memeval.evaluation.conversations.grounding import (
    GROUNDING_VERSIONS,
    ground_verdict,
    head_words,
)
from memeval.evaluation.conversations.locomo import LoCoMoProtocol, grounding, speakers_of
from memeval.evaluation.conversations.longmemeval import LongMemEvalProtocol

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
BUNDLE = ROOT / "results" / "locomo-local" / "runs" / "locomo"

PLANS = "Polishing her resume, rehearsing her interview answers, and building a portfolio site."
PLANS_Q = "What does Ann plan to do after the career fair?"


def _ok(answer: str, gold: str, question: str, version: int) -> bool:
    return ground_verdict(answer, gold, question, rules=version).supported


def test_most_parts_of_a_list_of_clauses_state_it() -> None:
    two_of_three = "Polishing her resume and rehearsing for interviews."
    assert not _ok(two_of_three, PLANS, PLANS_Q, 2)
    assert _ok(two_of_three, PLANS, PLANS_Q, 4)
    assert not _ok("Building a website.", PLANS, PLANS_Q, 4)  # one of three is not most


def test_a_list_of_names_still_needs_every_name() -> None:
    assert not _ok("Milo.", "Milo, Juniper", "What are the names of Ann's cats?", 4)
    assert not _ok("Milo and Juniper.", "Milo, Juniper, Pip", "Name Ann's cats.", 4)  # two of three names


SECRET = "It's the secret to keeping regulars happy and loyal"
SECRET_Q = "What did Ann say about greeting every guest by name?"


def test_the_gold_s_leading_words_alone_state_it() -> None:
    answer = "Greeting every guest by name is the secret."
    assert not _ok(answer, SECRET, SECRET_Q, 2)
    assert _ok(answer, SECRET, SECRET_Q, 4)
    assert head_words(SECRET) == {"secret"}


def test_other_words_or_a_later_word_alone_do_not() -> None:
    assert not _ok("It makes people come back for more.", SECRET, SECRET_Q, 4)  # words the gold lacks
    assert not _ok("Loyal.", SECRET, SECRET_Q, 4)  # not the leading phrase
    gold, q = "hiking together and cooking dinner", "What do Ann and Bo enjoy on weekends?"
    assert not _ok("Together.", gold, q, 4)


def test_version_4_is_kept() -> None:
    """Version 4 stays readable for runs scored under it (the current one: test_grounding_conv_v5.py)."""
    assert GROUNDING_VERSIONS[4] == "conv-grounding-v4"
    assert LoCoMoProtocol(grounding_version=4).grounding_version == LongMemEvalProtocol(grounding_version=4).grounding_version == 4


def _locomo():
    if not (DATA / "locomo").is_dir():
        pytest.skip("LoCoMo data is not here")
    from memeval.datasets.locomo import LoCoMoLoader

    return LoCoMoLoader(str(DATA)).load()


@pytest.mark.skipif(not BUNDLE.is_dir(), reason="the locomo-local bundle is not here")
def test_the_bundle_paraphrases_are_credited_under_4() -> None:
    ds = _locomo()
    questions = {q.id: q for q in ds.questions}
    cases = {("vanilla", "conv-30-q80"), ("cognee", "conv-30-q80"), ("vanilla", "conv-30-q52"),
             ("seem", "conv-30-q71")}
    for method, qid in sorted(cases):
        (run,) = BUNDLE.glob(f"{method}-*")
        with lzma.open(run / "predictions.jsonl.xz", "rt") as f:
            answer = next(p["answer"] for p in map(json.loads, f) if p["question_id"] == qid)
        q = questions[qid]
        args = (q.text, q.gold[0], int(q.attrs["category"]), answer, speakers_of(ds.corpus_for(q)))
        assert grounding(*args, rules=4)["grounded"], (method, qid, answer)
        if qid != "conv-30-q71":  # q71 ("It looks amazing" for "amazing") was already grounded
            assert not grounding(*args, rules=2)["grounded"], (method, qid)


@pytest.mark.skipif(not (DATA / "locomo" / "audit" / "known_wrong_answers.jsonl").exists(),
                    reason="the known-wrong answers are not here")
def test_known_wrong_answers_are_accepted_no_more_often() -> None:
    from memeval.evaluation.conversations.known_wrong import (
        GOLD_AUDIT,
        KNOWN_WRONG,
        flagged_questions,
        load_known_wrong,
    )

    ds = _locomo()
    known = load_known_wrong(DATA / KNOWN_WRONG, ds, flagged_questions(DATA / GOLD_AUDIT))
    accepted = {2: 0, 4: 0}
    for c in known.cases:
        q = c.question
        for v in accepted:
            accepted[v] += grounding(q.text, q.gold[0], int(q.attrs["category"]), c.label["answer"],
                                     c.speakers, v)["grounded"]
    assert len(known.cases) > 1000
    assert accepted[4] <= accepted[2]
