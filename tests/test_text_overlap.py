"""Hand-computed cases for the LoCoMo text-overlap metrics (F1, BLEU-1, evidence recall)."""

from __future__ import annotations

import math

import pytest

from evaluation.conversations.text_overlap import (
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

# Each pair was checked against NLTK's PorterStemmer (default mode), which the official LoCoMo
# scorer uses; the implementation agrees with it on all 60,736 alphabetic words of LoCoMo and
# LongMemEval-oracle (checked once, offline: NLTK is not a dependency).
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


def test_evidence_recall() -> None:
    assert evidence_recall(["1", "3"], ["3", "4"]) == 0.5
    assert evidence_recall(["2"], ["2"]) == 1.0
    assert math.isnan(evidence_recall([], ["1"]))
