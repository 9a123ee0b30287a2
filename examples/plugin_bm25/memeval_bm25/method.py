"""BM25 as a memeval method plugin: rank a corpus' units by Okapi BM25 against the question.

Everything a method needs is here: memeval finds the class by the entry point in this package's
pyproject.toml, its parameters and defaults by the constructor, and their documented values in
bm25.yaml (`config_file`). The shared answerer answers from the context `retrieve` returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import bm25s
import numpy as np

from memeval.datasets.types import Corpus, Question
from memeval.methods.base import MemoryMethod, Retrieval, Services, unit_block, unit_title


@dataclass
class _Index:
    corpus: Corpus
    model: Any  # bm25s.BM25 over the units, in corpus order


def _words(text: str) -> list[str]:
    return bm25s.tokenize([text], stopwords="en", return_ids=False, show_progress=False)[0]


class BM25(MemoryMethod):
    """BM25 over whole units (bm25s): the top-k units by weighted word overlap with the question."""

    config_file: ClassVar[str] = "bm25.yaml"  # beside this module: the documented defaults

    def __init__(self, services: Services, name: str | None = None, top_k: int | None = None,
                 k1: float = 1.5, b: float = 0.75, order: str = "corpus"):
        super().__init__(services, name)
        if order not in {"corpus", "score"}:
            raise ValueError("bm25 order must be 'corpus' or 'score'")
        self.top_k, self.k1, self.b, self.order = top_k, k1, b, order

    def params(self) -> dict[str, Any]:
        return {"k1": self.k1, "b": self.b}  # what the index depends on

    async def build_index(self, corpus: Corpus) -> _Index:
        texts = [f"{unit_title(u)}\n{u.text}" for u in corpus.units]
        model = bm25s.BM25(k1=self.k1, b=self.b)
        model.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
        return _Index(corpus, model)

    async def retrieve(self, index: _Index, question: Question) -> Retrieval:
        cap = self.services.cap
        k = self.top_k or cap.max_units or 5
        if cap.max_units is not None:  # the cap bounds an explicit top_k too
            k = min(k, cap.max_units)
        words = [w for w in _words(question.text) if w in index.model.vocab_dict]
        scores = index.model.get_scores(words) if words else np.zeros(len(index.corpus.units))
        kept: list[int] = []
        for i in np.argsort(-scores, kind="stable"):
            if len(kept) == k or scores[i] <= 0:  # a unit with no word of the question is no evidence
                break
            trial = self._ordered([*kept, int(i)])
            if cap.max_tokens is not None and self.tokens(self._text(index, trial)) > cap.max_tokens:
                continue  # over the token cap: try the next unit down
            kept.append(int(i))
        chosen = self._ordered(kept)
        units = [index.corpus.units[i].id for i in chosen]
        return Retrieval(self._text(index, chosen), units,
                         {"scores": {index.corpus.units[i].id: round(float(scores[i]), 4) for i in kept}})

    def _ordered(self, picked: list[int]) -> list[int]:
        return sorted(picked) if self.order == "corpus" else picked

    @staticmethod
    def _text(index: _Index, picked: list[int]) -> str:
        return "\n\n".join(unit_block(index.corpus, index.corpus.units[i].id) for i in picked)
