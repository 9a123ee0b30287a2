"""Text-overlap metrics for conversational QA: LoCoMo token F1 (stemmed), BLEU-1, evidence recall.

Everything here is a pure function of strings, so `memeval rescore` recomputes it
from predictions.jsonl alone. The F1 follows the official LoCoMo scorer (snap-research/locomo
task_eval/evaluation.py): its normalisation, NLTK's Porter stemmer in its default mode, the
per-category rules. BLEU-1 follows the Mem0 / A-Mem LoCoMo scripts, which use NLTK's tokenizer
and BLEU. Only NLTK code that needs no downloaded data is used (no Punkt, no WordNet).
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable

from nltk.stem import PorterStemmer
from nltk.tokenize import word_tokenize
from nltk.translate.bleu_score import brevity_penalty, closest_ref_length, modified_precision

_STEMMER = PorterStemmer()  # mode NLTK_EXTENSIONS, NLTK's default, as the official scorer builds it

# -- LoCoMo token F1 ---------------------------------------------------------------------------

_PUNCT = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")


def normalize(text: str) -> str:
    """Drop commas, lowercase, strip ASCII punctuation, drop a/an/the/and, collapse spaces."""
    t = str(text).replace(",", "").lower()
    t = "".join(ch for ch in t if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", t).split())


def porter_stem(word: str) -> str:
    """The Porter stem of one word, lowercased, in NLTK's default mode (the official scorer's)."""
    return _STEMMER.stem(word)


def stemmed_tokens(text: str) -> list[str]:
    return [_STEMMER.stem(w) for w in normalize(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD-style overlap F1 of stemmed, normalised tokens; 0 when nothing overlaps."""
    pred, ref = stemmed_tokens(prediction), stemmed_tokens(gold)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    p, r = same / len(pred), same / len(ref)
    return 2 * p * r / (p + r)


def multi_answer_f1(prediction: str, gold: str) -> float:
    """Category 1: split both on commas; mean over gold parts of the best F1 over prediction parts."""
    preds = [p.strip() for p in str(prediction).split(",")]
    golds = [g.strip() for g in str(gold).split(",")]
    return sum(max(token_f1(p, g) for p in preds) for g in golds) / len(golds)


ADVERSARIAL_MARKERS = ("no information available", "not mentioned")


def gold_for_scoring(gold: str, category: int) -> str:
    """Category 3 golds carry a rationale after ';': only the part before it is scored."""
    return str(gold).split(";")[0].strip() if int(category) == 3 else str(gold)


def locomo_f1(prediction: str, gold: str, category: int) -> float:
    """The official per-category rule: 1 multi-answer, 2-4 plain F1 (3 cut at ';'), 5 refusal."""
    category = int(category)
    if category == 5:
        low = str(prediction).lower()
        return 1.0 if any(m in low for m in ADVERSARIAL_MARKERS) else 0.0
    if category == 1:
        return multi_answer_f1(prediction, gold)
    return token_f1(prediction, gold_for_scoring(gold, category))


# -- BLEU-1 ------------------------------------------------------------------------------------

def bleu_tokens(text: str) -> list[str]:
    """The lowercased text through NLTK's word tokenizer, as the Mem0 / A-Mem LoCoMo scripts call
    it ("didn't" -> did n't, a final period split off, "lgbtq+" and "e.g." kept whole), without
    its Punkt sentence split first (that needs downloaded data; only inner periods differ)."""
    return word_tokenize(str(text).lower(), preserve_line=True)


def bleu1(prediction: str, gold: str) -> float:
    """The scripts' sentence_bleu with weights (1,0,0,0), one reference: clipped unigram precision
    times the brevity penalty exp(1 - r/c) when the answer is shorter; 0 with no overlap.

    Built from NLTK's own parts (modified_precision, brevity_penalty), not sentence_bleu itself:
    that writes the one-order mean as exp(log p), one unit in the last place off for about one
    value in five, and scored runs must rescore byte for byte. Its smoothing (method1 in the
    scripts) only touches the orders of weight 0. tests/test_text_overlap.py checks they agree."""
    hyp, ref = bleu_tokens(prediction), bleu_tokens(gold)
    if not hyp or not ref:
        return 0.0
    clipped = int(modified_precision([ref], hyp, 1) * len(hyp))  # Fraction: exact whatever its form
    if clipped == 0:
        return 0.0
    bp = brevity_penalty(closest_ref_length([ref], len(hyp)), len(hyp))
    return bp * clipped / len(hyp)


def locomo_bleu1(prediction: str, gold: str, category: int) -> float:
    return bleu1(prediction, gold_for_scoring(gold, category))


# -- evidence recall ---------------------------------------------------------------------------

def evidence_recall(gold_units: Iterable[str], context_units: Iterable[str]) -> float:
    """Fraction of the evidence sessions that the method put in the context (NaN without any)."""
    gold = set(map(str, gold_units))
    if not gold:
        return math.nan
    return len(gold & set(map(str, context_units))) / len(gold)
