"""Prompt-example copies by phrase: a word n-gram of a method's prompt examples found in its
index or its contexts while the corpus never writes it.

The index check `example_copies` matches whole stored values against the examples, so a copy
inside a longer value passes: SEEM's worked example ("the beach festival", "her garage") reached
47 EpBench and 23 LoCoMo contexts as slot fragments, and GSW's "Tobin Marwen" its EpBench
open questions, all at 0.000. Here every word n-gram (n >= 2) of every example text the method
declares (`MemoryMethod.prompt_examples`, its own prompts' and its package's, handed over as plain
data in the index view) counts, unless all its words are stopwords (NLTK's list as bm25s ships
it) or the corpus itself writes it (then the source, not the prompt, may be where it came from).
An n-gram with a single content word counts only as a determiner and a noun the corpus never
writes (stemmed): "their garage" in a conversation without garages counts, while "host of",
"date of the" and "the weather" (GSW's example passage; a model writes them of its own accord) did
on EpBench before this rule, and "recipient of the" matched GSW's own role label "recipient"
followed by any two stopwords in 77 LoCoMo contexts: each a false alarm.
Words are lower-cased runs of letters and digits, so matching ignores case and punctuation, and
every stopword reads as one wildcard "_": SEEM's example "her garage" is copied as "their
garage" (23 LoCoMo contexts), a determiner changed, the phrase kept.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..runs.health_file import Check
from .grading import check, not_measured, pct, share
from .support_text import STOPWORDS, stem

NAME = "prompt_example_phrases"
_WORD = re.compile(r"[a-z0-9]+")
MAX_N = 8  # a longer copy holds a copied n-gram of at most 8 words, which is counted


def tokens(text: str) -> list[str]:
    """The text's lower-cased words, each stopword as "_"."""
    return ["_" if w in STOPWORDS else w for w in _WORD.findall(text.lower())]


def words(text: str) -> str:
    """The text's `tokens` joined by single spaces, padded: " w1 _ w3 ... "."""
    return " " + " ".join(tokens(text)) + " "


def example_ngrams(examples: Iterable[str]) -> dict[str, str]:
    """Every word n-gram (2 <= n <= MAX_N) of the examples that is not all stopwords -> the first
    example it came from."""
    out: dict[str, str] = {}
    for ex in examples:
        ws = tokens(ex)
        for n in range(2, min(MAX_N, len(ws)) + 1):
            for i in range(len(ws) - n + 1):
                gram = ws[i:i + n]
                if any(w != "_" for w in gram):
                    out.setdefault(" ".join(gram), ex)
    return out


def foreign(grams: dict[str, str], corpus_text: str) -> list[str]:
    """The n-grams the corpus never writes (corpus_text as `words` gives it), those with one
    content word kept only when the corpus never writes that word's stem ("host" of "hosted")."""
    vocab = {stem(w) for w in set(corpus_text.split())}
    out = []
    for g in grams:
        if f" {g} " in corpus_text:
            continue
        parts = g.split()
        content = [w for w in parts if w != "_"]
        if len(content) >= 2 or (parts[0] == "_" and len(parts) == 2 and stem(content[0]) not in vocab):
            out.append(g)
    return out


def found(text: str, grams: list[str]) -> list[str]:
    """The n-grams `text` holds, longest first with any n-gram inside a longer found one left out."""
    padded = words(text)
    hits = sorted((g for g in grams if f" {g} " in padded), key=len, reverse=True)
    kept: list[str] = []
    for g in hits:
        if not any(f" {g} " in f" {k} " for k in kept):
            kept.append(g)
    return kept


def corpus_texts(dataset: Any) -> dict[str, str] | None:
    """Corpus id -> its units' words (text, title, timestamp), None without the benchmark data."""
    if dataset is None:
        return None
    return {str(cid): words("\n".join(t for u in corpus.units for t in (u.text, u.title or "", u.timestamp or "")))
            for cid, corpus in dataset.corpora.items()}


def example_phrase_checks(predictions: list[dict[str, Any]], index: dict[str, Any] | None,
                          stored: dict[str, list[Any] | None] | None, dataset: Any,
                          th: dict[str, Any]) -> list[Check]:
    """The context check (share of contexts holding a copied n-gram) and, where the index's claims
    are readable (`stored`: corpus id -> claims with a `text`), the index check (share of stored
    claims holding one). Not measured for a method that declares no examples."""
    examples = [e for e in (index or {}).get("prompt_examples") or [] if isinstance(e, str)]
    ctx_th, idx_th = th.get("context", {}), th.get("index", {})
    if not examples:
        return [not_measured(NAME, "context", ctx_th, "the method declares no prompt examples")]
    texts = corpus_texts(dataset)
    if texts is None:
        return [not_measured(NAME, "context", ctx_th, "the run's benchmark data is not on this machine")]
    grams = example_ngrams(examples)
    per_corpus: dict[str, list[str]] = {}

    def usable(cid: str) -> list[str]:
        if cid not in per_corpus:
            per_corpus[cid] = foreign(grams, texts.get(cid, " "))
        return per_corpus[cid]

    hits: Counter[str] = Counter()
    flagged: dict[str, str] = {}
    seen: dict[tuple[str, str], list[str]] = {}
    for p in predictions:
        cid, ctx = str(p.get("corpus_id")), str(p.get("context_text") or "")
        key = (cid, ctx)
        if key not in seen:
            seen[key] = found(ctx, usable(cid))
        if seen[key]:
            flagged[str(p.get("question_id"))] = "; ".join(seen[key][:3])
            hits.update(seen[key])
    out = [_check("context", len(flagged), len(predictions), "contexts", hits, ctx_th, flagged)]
    if stored:
        n_claims, n_bad, idx_hits = 0, 0, Counter[str]()
        for cid, claims in stored.items():
            for c in claims or []:
                n_claims += 1
                got = found(str(getattr(c, "text", c)), usable(str(cid)))
                if got:
                    n_bad += 1
                    idx_hits.update(got)
        if n_claims:
            out.append(_check("index", n_bad, n_claims, "stored claims", idx_hits, idx_th, {}))
    return out


def _check(scope: str, n: int, of: int, what: str, hits: Counter[str], th: dict[str, Any],
           questions: dict[str, str]) -> Check:
    sample = ", ".join(f"{g!r} ({k})" for g, k in hits.most_common(4))
    msg = (f"{pct(n, of)} {what} hold a phrase of the prompts' invented examples the corpus never writes"
           + (f": {sample}" if sample else ""))
    return check(NAME, scope, share(n, of), th, msg, questions=questions)
