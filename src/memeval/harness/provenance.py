"""The harness's own check of where an answer context's text comes from (the cap audit).

A method reports which units (chapters, sessions) its context draws on, and the harness enforces
the cap on that list. Some packages also put text in the context that no unit list covers
(GraphRAG's entity, relationship and community tables; LightRAG's entities and relations), so
the cap can leak. Per prediction the harness records:

- `verbatim_units`: every unit whose own text appears verbatim in the context (a run of at least
  `VERBATIM_WORDS` consecutive words that no other unit contains), found by the harness from the
  corpus, not by the method;
- `verbatim_beyond_units`: those of them the method did not report;
- `uncapped_tokens` / `uncapped_share`: o200k tokens of the context sections the method declares
  as not traceable to units (`Retrieval.extras["uncapped_text"]`; each must be a substring of
  the context), or None when the method declares nothing.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

from memeval.datasets.types import Corpus
from memeval.evaluation.runs.cap_audit import SHINGLE, STRIDE
from memeval.model_access.tokenizer import count_tokens

_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class VerbatimIndex:
    """Hashed word shingles of one corpus -> the one unit that contains them.

    A shingle found in two or more units (generated books repeat stock sentences) proves nothing
    about provenance and is not indexed: a unit counts as present only through text of its own.
    """

    def __init__(self, corpus: Corpus):
        self.order = {u.id: u.position for u in corpus.units}
        owners: dict[int, str | None] = {}
        for u in corpus.units:
            w = _words(u.text)
            for i in range(max(len(w) - SHINGLE + 1, 0)):  # every position, to find shared shingles
                key = hash(tuple(w[i:i + SHINGLE]))
                have = owners.get(key, u.id)
                owners[key] = u.id if have == u.id else None
        self.shingles: dict[int, str] = {}
        for u in corpus.units:  # index every STRIDE-th unique shingle (any 13-word own run hits)
            w = _words(u.text)
            for i in range(0, max(len(w) - SHINGLE + 1, 0), STRIDE):
                key = hash(tuple(w[i:i + SHINGLE]))
                if owners.get(key) == u.id:
                    self.shingles[key] = u.id

    def units_in(self, text: str) -> list[str]:
        """Units with at least one of their own shingles verbatim in `text`, in corpus order."""
        w = _words(text)
        found = {self.shingles[k] for k in (hash(tuple(w[i:i + SHINGLE])) for i in range(len(w) - SHINGLE + 1))
                 if k in self.shingles}
        return sorted(found, key=lambda u: self.order[u])


class CapAudit:
    """Per-corpus verbatim indexes, built on first use; the most recent `keep` are held (one book
    serves every question, while LongMemEval gives each question its own haystack)."""

    def __init__(self, keep: int = 16) -> None:
        self._indexes: OrderedDict[str, VerbatimIndex] = OrderedDict()
        self.keep = keep

    def _index(self, corpus: Corpus) -> VerbatimIndex:
        if corpus.id in self._indexes:
            self._indexes.move_to_end(corpus.id)
        else:
            self._indexes[corpus.id] = VerbatimIndex(corpus)
            while len(self._indexes) > self.keep:
                self._indexes.popitem(last=False)
        return self._indexes[corpus.id]

    def check(self, corpus: Corpus, context_text: str, units: list[str], extras: dict[str, Any],
              context_tokens: int) -> dict[str, Any]:
        verbatim = self._index(corpus).units_in(context_text)
        reported = set(units)
        uncapped = extras.get("uncapped_text")
        tokens = None
        if isinstance(uncapped, list):
            outside = [s for s in uncapped if s not in context_text]
            if outside:
                raise RuntimeError(f"uncapped_text holds {len(outside)} part(s) that are not in the context")
            tokens = sum(count_tokens(s) for s in uncapped)
        return {"verbatim_units": verbatim, "verbatim_beyond_units": [u for u in verbatim if u not in reported],
                "uncapped_tokens": tokens,
                "uncapped_share": (round(tokens / context_tokens, 4) if tokens is not None and context_tokens
                                   else None)}
