"""Embedding RAG: rank units (chapters/sessions) or paragraphs by cosine similarity to the question.

Unit mode retrieves top-k units (k = the context cap, as the official EpBench baseline does). When
a unit is longer than the embedder reads (all-MiniLM-L6-v2 stops at 512 tokens), a unit is scored
by its best paragraph, or by its mean paragraph vector. Paragraph mode retrieves 4 x cap
paragraphs, never from more units than the cap allows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from memeval.datasets.types import Corpus, Question

from .base import MemoryMethod, Retrieval, Services, unit_block


def paragraphs(text: str) -> list[str]:
    """Non-empty lines: an EpBench paragraph, or one turn of a rendered conversation session."""
    return [p.strip() for p in text.splitlines() if p.strip()]


@dataclass
class _Index:
    corpus: Corpus
    passages: list[tuple[str, str]]  # (unit id, passage text)
    vectors: np.ndarray
    unit_scoring: str  # whole | best_paragraph | mean_paragraph


class EmbeddingRAG(MemoryMethod):
    def __init__(self, services: Services, name: str | None = None, granularity: str = "unit",
                 unit_scoring: str = "auto", top_k: int | None = None,
                 paragraphs_per_unit_cap: int = 4, order: str = "corpus"):
        super().__init__(services, name)
        if granularity not in {"unit", "paragraph"}:
            raise ValueError("embedding_rag granularity must be 'unit' or 'paragraph'")
        if unit_scoring not in {"auto", "whole", "best_paragraph", "mean_paragraph"}:
            raise ValueError("unit_scoring must be auto, whole, best_paragraph or mean_paragraph")
        if order not in {"corpus", "score"}:
            raise ValueError("order must be 'corpus' or 'score'")
        self.granularity = granularity
        self.unit_scoring = unit_scoring
        self.top_k = top_k
        self.paragraphs_per_unit_cap = paragraphs_per_unit_cap
        self.order = order

    def params(self) -> dict[str, Any]:
        return {"granularity": self.granularity, "unit_scoring": self.unit_scoring}

    def _scoring_for(self, corpus: Corpus) -> str:
        if self.unit_scoring != "auto":
            return self.unit_scoring
        limit = self.services.embedder.max_input_tokens or 8000
        longest = max((self.tokens(u.text) for u in corpus.units), default=0)
        return "whole" if longest <= limit else "best_paragraph"

    async def build_index(self, corpus: Corpus) -> _Index:
        scoring = "paragraph" if self.granularity == "paragraph" else self._scoring_for(corpus)
        if scoring == "whole":
            passages = [(u.id, u.text) for u in corpus.units]
        else:
            passages = [(u.id, p) for u in corpus.units for p in paragraphs(u.text)]
        vectors = await self.services.embedder.embed([t for _, t in passages], "document")
        return _Index(corpus, passages, vectors, scoring)

    async def retrieve(self, index: _Index, question: Question) -> Retrieval:
        cap = self.services.cap.max_units
        k = self.top_k or cap or 5
        if cap is not None:
            k = min(k, cap)
        qv = (await self.services.embedder.embed([question.text], "query"))[0]
        sims = index.vectors @ qv
        if self.granularity == "paragraph":
            return self._paragraph_context(index, sims, k)
        unit_scores: dict[str, list[float]] = {}
        for (uid, _), s in zip(index.passages, sims, strict=True):
            unit_scores.setdefault(uid, []).append(float(s))
        agg = np.mean if index.unit_scoring == "mean_paragraph" else np.max
        ranked_all = sorted(unit_scores, key=lambda u: -agg(unit_scores[u]))
        ranked, skipped = self._within_tokens(index.corpus, ranked_all, k)
        chosen = self._ordered(index.corpus, ranked)
        scores = {u: round(float(agg(unit_scores[u])), 4) for u in ranked}
        text = "\n\n".join(unit_block(index.corpus, u) for u in chosen)
        extras: dict[str, Any] = {"scores": scores, "unit_scoring": index.unit_scoring}
        if skipped:
            extras["token_cap_skipped"] = skipped
        return Retrieval(text, chosen, extras)

    def _within_tokens(self, corpus: Corpus, ranked: list[str], k: int) -> tuple[list[str], list[str]]:
        """Take up to k units in score order, skipping any that would push the context over the
        token cap (measured as the harness measures it, in the final order); returns the skipped."""
        limit = self.services.cap.max_tokens
        if limit is None:
            return ranked[:k], []
        kept: list[str] = []
        skipped: list[str] = []
        for uid in ranked:
            if len(kept) == k:
                break
            trial = self._ordered(corpus, [*kept, uid])
            if self.tokens("\n\n".join(unit_block(corpus, u) for u in trial)) > limit:
                skipped.append(uid)
                continue
            kept.append(uid)
        return kept, skipped

    def _ordered(self, corpus: Corpus, ranked: list[str]) -> list[str]:
        if self.order == "score":
            return ranked
        pos = {u.id: u.position for u in corpus.units}
        return sorted(ranked, key=lambda u: pos[u])

    def _by_unit(self, index: _Index, picked: list[int]) -> dict[str, list[str]]:
        by_unit: dict[str, list[str]] = {}
        for i in sorted(picked) if self.order == "corpus" else picked:
            uid, text = index.passages[i]
            by_unit.setdefault(uid, []).append(text)
        return by_unit

    def _render(self, index: _Index, picked: list[int]) -> str:
        by_unit = self._by_unit(index, picked)
        return "\n\n".join(unit_block(index.corpus, u, "\n\n".join(ps)) for u, ps in by_unit.items())

    def _paragraph_context(self, index: _Index, sims: np.ndarray, k_units: int) -> Retrieval:
        limit = self.paragraphs_per_unit_cap * k_units
        picked: list[int] = []
        units: list[str] = []
        max_tokens = self.services.cap.max_tokens
        for i in np.argsort(-sims):
            uid = index.passages[int(i)][0]
            if uid not in units and len(units) >= k_units:
                continue  # the context cap counts units, not paragraphs
            if max_tokens is not None and self.tokens(self._render(index, [*picked, int(i)])) > max_tokens:
                break  # the token cap: stop before the paragraph that would exceed it
            if uid not in units:
                units.append(uid)
            picked.append(int(i))
            if len(picked) >= limit:
                break
        text = self._render(index, picked)
        if self.order == "corpus":
            picked.sort()
        by_unit = self._by_unit(index, picked)
        scores = {str(i): round(float(sims[i]), 4) for i in picked}
        return Retrieval(text, list(by_unit), {"paragraph_scores": scores, "n_paragraphs": len(picked)})
