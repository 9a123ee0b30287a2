"""Hybrid retrieval over frames: dense (embeddings), BM25 (bm25s) and personalised PageRank
over the graph, fused by reciprocal-rank fusion (RRF)."""

from __future__ import annotations

from typing import Any

import bm25s
import numpy as np

from .frames import Frame


def dense_ranking(vectors: np.ndarray | None, qvec: np.ndarray, n: int) -> list[int]:
    if vectors is None or len(vectors) == 0:
        return []
    sims = vectors @ qvec
    return [int(i) for i in np.argsort(-sims, kind="stable")[:n]]


class BM25Frames:
    """BM25 over frame texts (English stopwords), through the bm25s library."""

    def __init__(self, texts: list[str]):
        self.n = len(texts)
        self.model: Any = None
        if texts:
            self.model = bm25s.BM25()
            self.model.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    def ranking(self, query: str, n: int) -> list[int]:
        if self.model is None:
            return []
        tokens = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
        tokens = [t for t in tokens if t in self.model.vocab_dict]
        if not tokens:
            return []
        scores = self.model.get_scores(tokens)
        return [int(i) for i in np.argsort(-scores, kind="stable")[:n] if scores[int(i)] > 0]


def graph_ranking(frames: list[Frame], passage_score: dict[str, float], n: int) -> list[int]:
    """Frames by the best PageRank score of the passages they point at (0 = not reached)."""
    scored = [(max((passage_score.get(p, 0.0) for p in f.provenance), default=0.0), i)
              for i, f in enumerate(frames)]
    return [i for s, i in sorted(scored, key=lambda x: (-x[0], x[1])) if s > 0][:n]


def rrf(rankings: dict[str, list[int]], k: int = 60) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion: score(d) = sum over rankings of 1 / (k + rank of d), rank from 1.
    Ties break by the best single rank, then by item id, so the order is stable."""
    score: dict[int, float] = {}
    best: dict[int, int] = {}
    for ranking in rankings.values():
        for r, item in enumerate(ranking, start=1):
            score[item] = score.get(item, 0.0) + 1.0 / (k + r)
            best[item] = min(best.get(item, r), r)
    return sorted(score.items(), key=lambda x: (-x[1], best[x[0]], x[0]))
