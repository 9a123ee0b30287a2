"""The prompt-example phrase check (evaluation/health/example_phrases.py): copies inside longer
values, determiner changes, and the corpus's own phrases."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from memeval.evaluation.health.example_phrases import (
    example_ngrams,
    example_phrase_checks,
    foreign,
    found,
    words,
)
from memeval.methods.gsw.method import GSW
from memeval.methods.seem.method import SEEM

TH = {"context": {"warn": 0.0, "fail": 0.5}, "index": {"warn": 0.0, "fail": 0.5}}
EXAMPLE = "Mira Tolk fixed the torn kite in her garage for the beach festival."


def _dataset(text: str) -> SimpleNamespace:
    unit = SimpleNamespace(text=text, title="", timestamp="")
    return SimpleNamespace(corpora={"c1": SimpleNamespace(units=[unit])})


def _pred(qid: str, context: str) -> dict:
    return {"question_id": qid, "corpus_id": "c1", "context_text": context}


def test_a_copy_inside_a_longer_value_and_a_changed_determiner_count() -> None:
    corpus = "Jon: I opened my dance studio. Gina: My store is doing great, the festival was fun."
    preds = [_pred("q1", "- Jon; practised; at makeshift stage; because the beach festival on 2 May"),
             _pred("q2", "- Gina; was nervous; 27 May 2023; at their garage"),
             _pred("q3", "- Jon opened his dance studio")]
    checks = example_phrase_checks(preds, {"prompt_examples": [EXAMPLE]}, None, _dataset(corpus), TH)
    [ctx] = checks
    assert ctx.scope == "context" and ctx.value == pytest.approx(2 / 3, abs=1e-3)
    assert set(ctx.questions) == {"q1", "q2"}
    assert ctx.status == "fail"


def test_phrases_the_corpus_writes_are_not_copies() -> None:
    grams = example_ngrams([EXAMPLE])
    corpus = words("We fixed the torn kite yesterday at the beach festival.")
    kept = foreign(grams, corpus)
    assert found("they went to the beach festival", kept) == []  # the source says it
    assert found("Mira Tolk was there", kept) != []  # the source never names Mira Tolk


def test_single_content_word_counts_only_when_the_corpus_never_writes_it() -> None:
    grams = example_ngrams(["the weather turned"])
    assert found("the weather was fine", foreign(grams, words("It rained; the weather report said so."))) == []
    assert found("the weather was fine", foreign(grams, words("It rained all day."))) != []


def test_a_lone_content_word_followed_by_stopwords_is_not_a_copy() -> None:
    """The method's own role label "recipient" then any two stopwords is not the example's phrase."""
    grams = example_ngrams(["Nell was the recipient of the parcel."])
    kept = foreign(grams, words("Ada and Bo talked about the weekend."))
    assert found("role: recipient. It is the one who got it", kept) == []
    assert found("the parcel arrived", kept) != []  # determiner + a noun the corpus never writes


def test_stored_claims_and_no_examples() -> None:
    claims = {"c1": [SimpleNamespace(text="Gina met Mira Tolk"), SimpleNamespace(text="Gina runs a store")]}
    checks = example_phrase_checks([_pred("q1", "Gina runs a store")], {"prompt_examples": [EXAMPLE]}, claims,
                                   _dataset("Gina runs a store."), TH)
    index = next(c for c in checks if c.scope == "index")
    assert index.value == 0.5
    none = example_phrase_checks([_pred("q1", "x")], {"prompt_examples": []}, None, _dataset("x"), TH)
    assert none[0].status == "not_measured"


def test_methods_declare_their_prompt_examples() -> None:
    seem = " ".join(SEEM.prompt_examples).lower()
    assert "beach festival" in seem and "garage" in seem and "passage date" not in seem
    assert any("Tobin Marwen" in e for e in GSW.prompt_examples)
