"""How many embedding calls Embedding RAG's index stage needs on LongMemEval, without a model.

    python scripts/count_longmemeval_index_cost.py [--variant s] [--data-dir ../shared/data]

Runs the real EmbeddingRAG.build_index on every distinct haystack (as the harness does: one
index per corpus id, a content hash of the haystack) with a counting embedder behind the same
content-addressed cache the real embedders use, so a session shared by several haystacks is
embedded once. Prints questions, distinct haystacks, texts asked for, texts actually embedded
and HTTP batches, for the default `auto` scoring (whole sessions, or paragraphs where a session
is longer than the embedder reads), whole-session scoring and paragraph scoring.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

import numpy as np

from memeval.datasets.longmemeval import LongMemEvalLoader
from memeval.methods.base import Services
from memeval.methods.embedding_rag import EmbeddingRAG
from memeval.model_access.cache import ResponseCache
from memeval.model_access.embed import Embedder


class CountingEmbedder(Embedder):
    """Embeds nothing: counts the uncached texts and batches a real endpoint would receive."""

    def __init__(self, batch_size: int) -> None:
        super().__init__("counting", batch_size=batch_size, cache=ResponseCache(None))
        self.texts = 0
        self.batches = 0
        self.requested = 0

    async def embed(self, texts: list[str], input_type: str = "document") -> np.ndarray:
        self.requested += len(texts)
        return await super().embed(texts, input_type)

    async def _embed_batch(self, texts: list[str], input_type: str) -> tuple[np.ndarray, int]:
        self.texts += len(texts)
        self.batches += 1
        return np.ones((len(texts), 4), dtype=np.float32), 0


async def count(dataset, unit_scoring: str, batch_size: int) -> dict[str, object]:
    embedder = CountingEmbedder(batch_size)
    method = EmbeddingRAG(Services(llm=None, embedder=embedder, cap=dataset.natural_cap,  # type: ignore[arg-type]
                                   store_root=Path(".")), unit_scoring=unit_scoring)
    corpus_ids = list(dict.fromkeys(q.corpus_id for q in dataset.questions))
    resolved: dict[str, int] = {}
    for cid in corpus_ids:
        built = await method.build_index(dataset.corpora[cid])
        resolved[built.unit_scoring] = resolved.get(built.unit_scoring, 0) + 1
    index = {"index_builds": len(corpus_ids), "haystacks_by_scoring": resolved,
             "texts_requested": embedder.requested, "texts_embedded": embedder.texts,
             "http_batches": embedder.batches}
    queries = {q.text for q in dataset.questions}
    index["query_texts"] = len(queries)  # one query embedding per distinct question text
    return index


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", default="s", choices=["s", "oracle"])
    ap.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()
    t0 = time.perf_counter()
    ds = LongMemEvalLoader(args.variant, args.data_dir).load()
    sessions = sum(len(c.units) for c in ds.corpora.values())
    distinct = len({u.text for c in ds.corpora.values() for u in c.units})
    report = {"variant": args.variant, "questions": len(ds.questions), "distinct_haystacks": len(ds.corpora),
              "session_instances": sessions, "distinct_session_texts": distinct,
              "load_seconds": round(time.perf_counter() - t0, 1)}
    for scoring in ("auto", "whole", "best_paragraph"):
        t = time.perf_counter()
        report[scoring] = asyncio.run(count(ds, scoring, args.batch_size))
        report[scoring]["seconds"] = round(time.perf_counter() - t, 1)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
