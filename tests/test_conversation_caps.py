"""The context cap in units and tokens: Embedding RAG skips a unit that would exceed it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np

from memeval.datasets.types import ContextCap, Corpus, Question, Unit
from memeval.methods.base import Services, unit_block
from memeval.methods.embedding_rag import EmbeddingRAG
from memeval.model_access.tokenizer import count_tokens


class RankedEmbedder:
    """Unit i scores 10 - i against any query: retrieval order is corpus order."""

    async def embed(self, texts: list[str], input_type: str = "document") -> np.ndarray:
        if input_type == "query":
            return np.ones((len(texts), 1), dtype=np.float32)
        return np.array([[10.0 - int(t.split()[0][1:])] for t in texts], dtype=np.float32)


CORPUS = Corpus("c", tuple(Unit(str(i), f"u{i} " + "word " * (50 * (i + 1)), i, "2023/01/0{i}")
                           for i in range(4)))
QUESTION = Question("q", "c", "which?", ("x",))


def _retrieve(cap: ContextCap, **kw):
    method = EmbeddingRAG(Services(llm=None, embedder=RankedEmbedder(), cap=cap, store_root=Path(".")),
                          unit_scoring="whole", **kw)

    async def go():
        return await method.retrieve(await method.build_index(CORPUS), QUESTION)

    return asyncio.run(go())


def test_unit_cap_alone_keeps_top_k() -> None:
    r = _retrieve(ContextCap(max_units=3))
    assert r.units == ["0", "1", "2"] and "token_cap_skipped" not in r.extras


def test_token_cap_skips_units_that_would_exceed_it() -> None:
    two = count_tokens("\n\n".join(unit_block(CORPUS, u) for u in ("0", "1")))
    r = _retrieve(ContextCap(max_units=3, max_tokens=two + 5))
    assert r.units == ["0", "1"] and r.extras["token_cap_skipped"] == ["2", "3"]
    assert count_tokens(r.context_text) <= two + 5
    empty = _retrieve(ContextCap(max_units=3, max_tokens=3))
    assert empty.units == [] and empty.context_text == ""


def test_token_cap_in_paragraph_mode() -> None:
    r = _retrieve(ContextCap(max_units=3, max_tokens=150), granularity="paragraph")
    assert count_tokens(r.context_text) <= 150 and r.units == ["0"]


def test_a_too_long_top_unit_is_skipped_not_the_whole_context() -> None:
    global CORPUS
    saved = CORPUS
    CORPUS = Corpus("c", (Unit("0", "u0 " + "word " * 900, 0), Unit("1", "u1 short", 1), Unit("2", "u2 short", 2)))
    try:
        r = _retrieve(ContextCap(max_units=2, max_tokens=200))
    finally:
        CORPUS = saved
    assert r.units == ["1", "2"] and r.extras["token_cap_skipped"] == ["0"]
