"""The unsourced-names check: names in a context that its corpus never writes.

A memory that writes its own text (GSW's entity summaries, a graph package's community reports
and node descriptions) can hand the answering model things the source never said, and every
other check passes it: the units are right, the dates are there. Two kinds were read in real
runs: a small model's invention (LoCoMo GSW: Jon's studio "in the city of Los Angeles", in 46
of 105 contexts), and a package prompt's own example copied into the index (GraphRAG's
community reports about a "Central Institution Chair Martin Smith", in every context).

A name here is a run of capitalised words outside a sentence's first word (a sentence-initial
word is left out whatever it is: "Additionally" is not a name, so the measure is a lower bound).
It counts as unsourced when one of its words, stemmed (NLTK's Lancaster stemmer, chosen to
match too much rather than too little: "Shows" matches "show", "Owner" matches "owns",
"Gina's" matches "Gina"), appears nowhere in the corpus (unit texts, titles and
timestamps) or the question; weekday and month names count as sourced, being derivable from
dates. The exact label strings a method's context format writes around its memory (its section
headers, field names, a package's own speaker label) are removed first: they are the method's
frame, declared by the method (`MemoryMethod.context_labels`), never guessed from frequency,
which would hide an invented name that reaches every context.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from nltk.stem.lancaster import LancasterStemmer

from ..runs.health_file import Check
from .grading import check, not_measured, pct, share

SCOPE = "context"
NAME = "unsourced_names"
# a capitalised word with a lower-case letter (inner capitals kept: "TikTok"; acronyms left out)
_WORD = r"[A-Z][A-Za-z]*[a-z][A-Za-z]*(?:['’][a-z]+)?(?:-[A-Za-z]+)*"
_PHRASE = re.compile(rf"(?<![A-Za-z]){_WORD}(?: {_WORD})*(?![A-Za-z])")
# what may stand between a sentence's end (or a line's start) and its first word: spaces,
# brackets, list and table marks, markdown emphasis; an opening quote starts a sentence itself
_OPENERS = " \t([*_#>|-•"
_ENDS = ".!?:;|\n\"'“‘"
_TOKENS = re.compile(r"[A-Za-z]+")
_CALENDAR = frozenset((
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february",
    "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"))
_stemmer = LancasterStemmer()  # the most aggressive: a paraphrase's 'Owner' matches 'owns'


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    return _stemmer.stem(word.lower())


def vocabulary(texts: Iterable[str]) -> frozenset[str]:
    """The stems of every word the texts write (lower-cased)."""
    words = {w.lower() for t in texts for w in _TOKENS.findall(t or "")}
    return frozenset(stem(w) for w in words | _CALENDAR)


def _sentence_initial(text: str, start: int) -> bool:
    i = start - 1
    while i >= 0 and text[i] in _OPENERS:
        i -= 1
    return i < 0 or text[i] in _ENDS


def names(text: str) -> list[str]:
    """Capitalised name phrases in the text, each without a sentence-initial first word."""
    out = []
    for m in _PHRASE.finditer(text):
        words = m.group().split(" ")
        if _sentence_initial(text, m.start()):
            words = words[1:]
        if words:
            out.append(" ".join(words))
    return out


def unsourced(text: str, vocab: frozenset[str], labels: tuple[str, ...] = ()) -> set[str]:
    """The names in `text` with a word `vocab` (a corpus's stems) does not hold; `labels` (the
    method's frame) are cut out first, each leaving a line break so the next word starts afresh."""
    for label in sorted(labels, key=len, reverse=True):
        text = text.replace(label, "\n")
    return {n for n in names(text)
            if any(stem(w) not in vocab for w in _TOKENS.findall(n.replace("'s", "").replace("’s", "")))}


def unsourced_names_check(predictions: list[dict[str, Any]], sources: dict[str, frozenset[str]] | None,
                          labels: tuple[str, ...], markers: tuple[str, ...], limits: dict[str, Any]) -> Check:
    """Share of non-empty contexts that hold a name their corpus never writes, with the names most
    contexts hold. `sources`: corpus id -> vocabulary() of its units (None: the benchmark data
    is not on this machine)."""
    if sources is None:
        return not_measured(NAME, SCOPE, limits, "the run's benchmark data is not on this machine")
    seen: dict[tuple[str, str, str], set[str]] = {}  # contexts repeat (Vanilla's): read each once
    hits = Counter[str]()
    flagged = n = 0
    found: dict[str, str] = {}  # question id -> its names, for the explorer's question page
    for p in predictions:
        ctx = str(p.get("context_text") or "")
        for m in markers:
            ctx = ctx.replace(m, "")
        vocab = sources.get(str(p.get("corpus_id")))
        if not ctx.strip() or vocab is None:
            continue
        key = (str(p.get("corpus_id")), str(p.get("question") or ""), ctx)
        if key not in seen:
            asked = vocabulary([key[1]])
            seen[key] = unsourced(ctx, vocab | asked, labels)
        n += 1
        flagged += bool(seen[key])
        hits.update(seen[key])
        if seen[key]:
            names_here = sorted(seen[key])
            found[str(p.get("question_id"))] = ", ".join(names_here[:8]) + (
                f" and {len(names_here) - 8} more" if len(names_here) > 8 else "")
    if not n:
        return not_measured(NAME, SCOPE, limits, "no context to read")
    what = f"{pct(flagged, n)} contexts hold a name the corpus never writes"
    if hits:
        ranked = sorted(hits.items(), key=lambda item: (-item[1], item[0]))  # ties by name: one message every run
        top = ", ".join(f"'{name}' ({k})" for name, k in ranked[:4])
        what += f"; most often {top}" + (f" and {len(hits) - 4} more" if len(hits) > 4 else "")
    return check(NAME, SCOPE, share(flagged, n), limits, what, questions=found)
