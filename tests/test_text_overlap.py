"""Hand-computed cases for the LoCoMo text-overlap metrics (F1, BLEU-1, evidence recall)."""

from __future__ import annotations

import math

import nltk
import pytest
from nltk.stem import PorterStemmer
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from memeval.evaluation.conversations import text_overlap
from memeval.evaluation.conversations.text_overlap import (
    bleu1,
    bleu_tokens,
    evidence_recall,
    locomo_bleu1,
    locomo_f1,
    multi_answer_f1,
    normalize,
    porter_stem,
    stemmed_tokens,
    token_f1,
)

# Porter (1980)'s own examples and the NLTK-default departures ("dying" -> die, "sky"/"skies"),
# written out by hand: the stems the official LoCoMo scorer's PorterStemmer() gives.
STEMS = {
    "caresses": "caress", "ponies": "poni", "ties": "tie", "cats": "cat", "feed": "feed",
    "agreed": "agre", "plastered": "plaster", "motoring": "motor", "sing": "sing",
    "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
    "tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "filing": "file",
    "happy": "happi", "sky": "sky", "skies": "sky", "says": "say", "cried": "cri", "died": "die",
    "dying": "die", "relational": "relat", "conditional": "condit", "rational": "ration",
    "digitizer": "digit", "generalization": "gener", "hopeful": "hope", "electricity": "electr",
    "adjustment": "adjust", "formality": "formal", "painting": "paint", "sunrises": "sunris",
    "by": "by", "is": "is",
}


@pytest.mark.parametrize(("word", "stem"), sorted(STEMS.items()))
def test_porter_stem(word: str, stem: str) -> None:
    assert porter_stem(word) == stem


def test_stemmer_is_nltks_default_mode_as_the_official_scorer_builds_it() -> None:
    # snap-research/locomo task_eval/evaluation.py: `ps = PorterStemmer()`, default mode
    assert text_overlap._STEMMER.mode == PorterStemmer.NLTK_EXTENSIONS
    # where the modes part: ORIGINAL_ALGORITHM would stem these differently
    original = PorterStemmer(PorterStemmer.ORIGINAL_ALGORITHM)
    assert [porter_stem(w) for w in ("dying", "skies")] == ["die", "sky"]
    assert [original.stem(w) for w in ("dying", "skies")] != ["die", "sky"]


def test_normalisation_drops_commas_punctuation_and_articles() -> None:
    assert normalize("The cat, and a Dog!") == "cat dog"
    assert normalize("An apple-pie; 7 May, 2023.") == "applepie 7 may 2023"
    assert stemmed_tokens("She painted the sunrises") == ["she", "paint", "sunris"]


def test_token_f1_hand_computed() -> None:
    # pred stems {she, paint, sunris}, gold {paint, sunris}: P = 2/3, R = 1, F1 = 0.8
    assert token_f1("She painted a sunrise", "painting sunrises") == pytest.approx(0.8)
    assert token_f1("In 2022", "2022") == pytest.approx(2 / 3)  # int golds arrive as strings
    assert token_f1("nothing alike", "completely different") == 0.0
    assert token_f1("", "x") == 0.0


def test_category_1_multi_answer_rule() -> None:
    # gold parts: Paris (best over pred parts = 1), Rome (0): mean 0.5
    assert multi_answer_f1("Paris, London", "Paris, Rome") == pytest.approx(0.5)
    assert locomo_f1("London, Paris", "Paris, Rome", 1) == pytest.approx(0.5)
    # one prediction part vs two gold parts: each gold part scored against it
    assert locomo_f1("Paris and Rome", "Paris, Rome", 1) == pytest.approx(2 / 3)  # 2/3 each
    # the same strings under category 4 are plain F1 (commas dropped): P = R = 1
    assert locomo_f1("Paris and Rome", "Paris, Rome", 4) == pytest.approx(1.0)


def test_category_3_gold_cut_at_semicolon() -> None:
    assert locomo_f1("likely yes", "Likely yes; she collects books", 3) == pytest.approx(1.0)
    assert locomo_f1("likely yes", "Likely yes; she collects books", 4) < 1.0


def test_category_5_refusal_rule() -> None:
    assert locomo_f1("Not mentioned in the conversation", "ignored", 5) == 1.0
    assert locomo_f1("No information available.", "ignored", 5) == 1.0
    assert locomo_f1("self-care is important", "self-care is important", 5) == 0.0


def test_bleu1_hand_computed() -> None:
    # all 3 unigrams match, c = 3 < r = 6: BP = exp(1 - 6/3) = e^-1
    assert bleu1("the cat sat", "the cat sat on the mat") == pytest.approx(math.exp(-1))
    # clipped counts: the x3 vs 1 -> 1, cat 1 -> 2 of 4; c > r: BP = 1
    assert bleu1("the the the cat", "the cat") == pytest.approx(0.5)
    assert bleu1("dog", "the cat") == 0.0
    assert bleu1("", "the cat") == 0.0
    assert locomo_bleu1("likely yes", "Likely yes; she collects books", 3) == pytest.approx(1.0)


def test_bleu_tokens_split_like_treebank() -> None:
    assert bleu_tokens("Didn't go.") == ["did", "n't", "go", "."]
    assert bleu_tokens('"Becoming Nicole", 3:30 pm') == ["``", "becoming", "nicole", "''", ",", "3:30", "pm"]
    assert bleu_tokens("LGBTQ+ e.g. Caroline's") == ["lgbtq+", "e.g.", "caroline", "'s"]


BLEU_CASES = [
    ("the cat sat", "the cat sat on the mat"), ("the the the cat", "the cat"), ("dog", "the cat"),
    ("9 June 2023", "15 June, 2023"), ("Networking and online platforms.",
                                       "fair, networking events, dance competitions"),
    ("The local artist's team was formed in 2023.", "February, 2023"),
    ("Didn't she paint a sunrise? Yes, in 2022.", "She painted a sunrise in 2022"),
]


@pytest.mark.parametrize(("pred", "gold"), BLEU_CASES)
def test_bleu1_is_the_scripts_sentence_bleu(pred: str, gold: str) -> None:
    # the Mem0 / A-Mem LoCoMo scripts: sentence_bleu([ref], hyp, (1, 0, 0, 0), method1 smoothing);
    # theirs reads exp(log p), so the two may part in the last bit only
    official = sentence_bleu([bleu_tokens(gold)], bleu_tokens(pred), weights=(1, 0, 0, 0),
                             smoothing_function=SmoothingFunction().method1)
    assert bleu1(pred, gold) == pytest.approx(official, rel=1e-12, abs=0)


def test_bleu1_keeps_its_float_arithmetic() -> None:
    # [9 june 2023] vs [15 june , 2023]: clipped 2 of c = 3 < r = 4; BP * 2 / 3 in this order is
    # the value scored runs hold (sentence_bleu gives 0.47768754038252614, one bit lower)
    value = bleu1("9 June 2023", "15 June, 2023")
    assert value == math.exp(1 - 4 / 3) * 2 / 3 == 0.4776875403825262


def test_no_nltk_data_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("NLTK data requested")

    monkeypatch.setattr(nltk.data, "load", refuse)
    monkeypatch.setattr(nltk.data, "find", refuse)
    monkeypatch.setattr(nltk, "download", refuse)
    assert bleu1("Didn't go. Then home.", "did not go") > 0
    assert locomo_f1("Painted sunrises.", "painting a sunrise", 4) == 1.0


def test_evidence_recall() -> None:
    assert evidence_recall(["1", "3"], ["3", "4"]) == 0.5
    assert evidence_recall(["2"], ["2"]) == 1.0
    assert math.isnan(evidence_recall([], ["1"]))
