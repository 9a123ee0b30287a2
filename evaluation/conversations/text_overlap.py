"""Text-overlap metrics for conversational QA: LoCoMo token F1 (stemmed), BLEU-1, evidence recall.

Everything here is a pure function of strings, so `python -m evaluation.rescore` recomputes it
from predictions.jsonl alone. The F1 follows the official LoCoMo scorer's rules (normalisation,
Porter stemming, the per-category rules); the stemmer below reproduces the behaviour of NLTK's
default Porter mode, which that scorer uses, without depending on NLTK.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable

# -- Porter stemmer (Porter 1980, with the NLTK-default departures) ---------------------------

_VOWELS = frozenset("aeiou")
# Irregular forms NLTK's default mode maps directly.
_IRREGULAR = {
    "skies": "sky", "sky": "sky", "dying": "die", "lying": "lie", "tying": "tie",
    "news": "news", "innings": "inning", "inning": "inning", "outings": "outing",
    "outing": "outing", "cannings": "canning", "canning": "canning", "howe": "howe",
    "proceed": "proceed", "exceed": "exceed", "succeed": "succeed",
}
_STEP2 = (("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
          ("izer", "ize"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
          ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
          ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
          ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"), ("fulli", "ful"))
_STEP3 = (("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"),
          ("ful", ""), ("ness", ""))
_STEP4 = ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
          "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize")


def _cons(w: str, i: int) -> bool:
    """Is w[i] a consonant? 'y' is one at the start or after a vowel."""
    c = w[i]
    if c in _VOWELS:
        return False
    if c == "y":
        return i == 0 or not _cons(w, i - 1)
    return True


def _m(stem: str) -> int:
    """Porter's measure: the number of vowel-consonant sequences in the stem."""
    pattern = "".join("c" if _cons(stem, i) else "v" for i in range(len(stem)))
    return len(re.findall("v+c+", pattern))


def _has_vowel(stem: str) -> bool:
    return any(not _cons(stem, i) for i in range(len(stem)))


def _double_cons(w: str) -> bool:
    return len(w) >= 2 and w[-1] == w[-2] and _cons(w, len(w) - 1)


def _cvc(w: str) -> bool:
    """*o: ends consonant-vowel-consonant, the last not w, x or y (or a 2-letter vowel-consonant)."""
    if len(w) >= 3:
        return (_cons(w, len(w) - 3) and not _cons(w, len(w) - 2) and _cons(w, len(w) - 1)
                and w[-1] not in "wxy")
    return len(w) == 2 and not _cons(w, 0) and _cons(w, 1)


def _first_rule(word: str, rules: Iterable[tuple[str, str]], min_m: int) -> str:
    """Apply the first rule whose suffix matches, if the stem's measure allows; never a second."""
    for suffix, repl in rules:
        if word.endswith(suffix):
            stem = word[: len(word) - len(suffix)]
            return stem + repl if _m(stem) >= min_m else word
    return word


def _step1(w: str) -> str:
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies"):
        w = w[:-1] if len(w) == 4 else w[:-2]
    elif w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if w.endswith("ied"):
        return w[:-1] if len(w) == 4 else w[:-2]
    if w.endswith("eed"):
        return w[:-1] if _m(w[:-3]) > 0 else w
    for suffix in ("ed", "ing"):
        if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
            w = w[: -len(suffix)]
            if w.endswith(("at", "bl", "iz")):
                return w + "e"
            if _double_cons(w) and w[-1] not in "lsz":
                return w[:-1]
            if _m(w) == 1 and _cvc(w):
                return w + "e"
            return w
    return w


def _step1c(w: str) -> str:
    if w.endswith("y") and len(w) > 2 and _cons(w, len(w) - 2):
        return w[:-1] + "i"
    return w


def _step2(w: str) -> str:
    if w.endswith("alli") and _m(w[:-4]) > 0:
        return _step2(w[:-2])
    if w.endswith("logi"):
        return w[:-1] if _m(w[:-3]) > 0 else w
    return _first_rule(w, _STEP2, 1)


def _step4(w: str) -> str:
    for suffix in _STEP4:
        if w.endswith(suffix):
            stem = w[: len(w) - len(suffix)]
            if suffix == "ion" and not stem.endswith(("s", "t")):
                continue  # 'ion' only after s or t; the next candidate ('ou') cannot match
            return stem if _m(stem) > 1 else w
    return w


def _step5(w: str) -> str:
    if w.endswith("e"):
        stem = w[:-1]
        m = _m(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            w = stem
    if w.endswith("ll") and _m(w[:-1]) > 1:
        w = w[:-1]
    return w


def porter_stem(word: str) -> str:
    """The Porter stem of one lowercase word."""
    w = word.lower()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if len(w) <= 2:
        return w
    w = _step1(w)
    w = _step1c(w)
    w = _step2(w)
    w = _first_rule(w, _STEP3, 1)
    w = _step4(w)
    return _step5(w)


# -- LoCoMo token F1 ---------------------------------------------------------------------------

_PUNCT = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")


def normalize(text: str) -> str:
    """Drop commas, lowercase, strip ASCII punctuation, drop a/an/the/and, collapse spaces."""
    t = str(text).replace(",", "").lower()
    t = "".join(ch for ch in t if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", t).split())


def stemmed_tokens(text: str) -> list[str]:
    return [porter_stem(w) for w in normalize(text).split()]


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

_BLEU_SUBS = (
    (re.compile(r'(^|[ (\[{<])"'), r"\1 `` "),  # opening double quote, as Treebank writes it
    (re.compile(r'"'), " '' "),  # closing double quote
    (re.compile(r"([;@#$%&?!()\[\]{}<>]|\.\.\.|--)"), r" \1 "),  # always separate
    (re.compile(r"([:,])(?=[^\d]|$)"), r" \1 "),  # ',' and ':' unless inside a number
    (re.compile(r"([^.])\.(\s*(?:''|'|[)\]}>])?\s*)$"), r"\1 . \2"),  # the final period only
    (re.compile(r"(^|[ (\[{<])'(?=\w)"), r"\1' "),  # opening single quote
    (re.compile(r"([^' ])('s|'m|'d|'ll|'re|'ve|n't|')(?=\s|$)"), r"\1 \2"),  # clitics, '
)


def bleu_tokens(text: str) -> list[str]:
    """Lowercased whitespace tokens after Treebank-style splitting (punctuation, a final period,
    clitics: "didn't" -> did n't), close to the nltk word_tokenize the Mem0 / A-Mem LoCoMo
    scripts use: inner periods and '+' stay attached ("lgbtq+", "e.g.")."""
    t = str(text).lower()
    for pattern, repl in _BLEU_SUBS:
        t = pattern.sub(repl, t)
    return t.split()


def bleu1(prediction: str, gold: str) -> float:
    """Sentence BLEU with weights (1,0,0,0), one reference: clipped unigram precision times the
    brevity penalty exp(1 - r/c) when the answer is shorter than the gold; 0 with no overlap
    (as nltk's sentence_bleu returns, whatever its smoothing)."""
    hyp, ref = bleu_tokens(prediction), bleu_tokens(gold)
    if not hyp or not ref:
        return 0.0
    clipped = sum((Counter(hyp) & Counter(ref)).values())
    if clipped == 0:
        return 0.0
    bp = 1.0 if len(hyp) > len(ref) else math.exp(1 - len(ref) / len(hyp))
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
