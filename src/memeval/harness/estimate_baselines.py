"""Call records from a package method's documented model of its calls (its class's `cost_model`).

The official packages run in their own environments and decide their calls from their own
replies (entities found, communities formed), so they cannot be dry-run like the framework's
methods. Each package method's class declares a `CostModel` (methods/external/cost_model.py):
index calls per chunk (or per unit), query-time calls per question, its context budget. Those
figures are approximate (see each class's note; treat index figures as +-50%). The answer and
judge stages are exact in shape: the real answer and judge prompts are built around a context of
the size the package returns within the cap. A package method with no cost model is priced on
its answers and judgments alone, and the estimate says so.
"""

from __future__ import annotations

import asyncio
import math
import zlib
from typing import Any

from memeval.datasets.types import Question
from memeval.methods.external.cost_model import CostModel
from memeval.model_access.dry import CallRecord
from memeval.model_access.tokenizer import count_tokens
from memeval.model_access.usage import stage


def no_cost_model_note(cls: type) -> str:
    """The estimate's line for a package method whose class declares no cost model."""
    return (f"no cost model: declare `cost_model` (a memeval.methods.external.cost_model.CostModel) on "
            f"{cls.__module__}.{cls.__qualname__} to price its index and retrieval calls; only its answers "
            "and judgments are priced here, on contexts filled to the cap")


def _chunks(unit_tokens: list[int], chunk: tuple[int, int] | None) -> list[int]:
    if chunk is None:
        return unit_tokens
    size, overlap = chunk
    out = []
    for t in unit_tokens:
        n = max(1, math.ceil((t - overlap) / (size - overlap)))
        out.extend([min(size, math.ceil(t / n) + overlap)] * n)
    return out


def _checked(c: Any, model: CostModel) -> None:
    """Refuse a configuration the cost model does not price (a parameter value it does not assume)."""
    name = str(c.method_cfg.name)
    for key, value in model.assumes.items():
        actual = c.method_cfg.get(key, value)
        if actual != value:
            raise ValueError(f"{name}: {model.not_modelled or 'not modelled'} ({key}={actual!r}; its cost "
                             f"model prices {key}={value!r} only)")


def baseline_records(c: Any, model: CostModel | None) -> list[CallRecord]:
    """Index records from the cost model (none without one); answer and judge go through the dry clients."""
    if model is None:
        asyncio.run(_answer_and_judge(c, None))
        return []
    _checked(c, model)
    llm, emb = c.llm.display_name, c.embedder.display_name
    indexer = c.indexer.display_name  # index-time calls go to the indexing model (the proxy routes them)
    records: list[CallRecord] = []
    corpora = list(dict.fromkeys(q.corpus_id for q in c.questions))
    for cid in corpora:
        unit_tokens = [count_tokens(u.text) for u in c.dataset.corpora[cid].units]
        for size in _chunks(unit_tokens, model.chunk):
            for call in model.calls:
                whole, frac = divmod(call.per_chunk, 1)
                for _ in range(int(whole) + (1 if frac else 0)):
                    prompt = call.template_tokens + (size if call.includes_chunk else 0)
                    records.append(CallRecord("index", indexer, prompt, call.output_tokens, False))
            records.append(CallRecord("index", emb, model.embed_per_chunk, 0, False))
    for _ in c.questions:
        for call in model.query_calls:
            records.append(CallRecord("retrieve", llm, call.template_tokens + 30, call.output_tokens, False))
        records.append(CallRecord("retrieve", emb, 30, 0, False))
    asyncio.run(_answer_and_judge(c, model.context_tokens, model.uncapped_tokens))
    return records


def _context(c: Any, q: Question, budget: int | None, uncapped: int = 0) -> str:
    """Chapters' text up to the cap (units and tokens) and the package's own budget, then
    `uncapped` tokens of the chapters after them: what a package adds outside the cap (cognee's
    graph node text, copied from the book).

    Which chapters a package retrieves is unknown here; a run of chapters starting at a
    question-dependent place keeps contexts as different across questions as retrieved ones
    are, so the prompt-caching discount is not credited for a shared prefix that would not exist.
    """
    every = c.dataset.corpora[q.corpus_id].units
    start = zlib.crc32(q.id.encode()) % len(every)
    ring = every[start:] + every[:start]
    units = ring[: c.cap.max_units or None]
    text, used = [], 0
    limit = min(x for x in (budget, c.cap.max_tokens, 10**9) if x is not None)
    for u in units:
        t = count_tokens(u.text)
        if used + t > limit:
            break
        text.append(u.text)
        used += t
    extra: list[str] = []
    for u in ring[len(text):]:
        if uncapped <= 0:
            break
        words = u.text.split()
        take = words[: max(1, int(uncapped * 0.75))]  # about 0.75 words a token; counted below
        extra.append(" ".join(take))
        uncapped -= count_tokens(extra[-1])
    return "\n\n".join(text + extra)


async def _answer_and_judge(c: Any, budget: int | None, uncapped: int = 0) -> None:
    sem = asyncio.Semaphore(16)

    async def one(q: Question) -> None:
        async with sem:
            with stage("answer"):
                result = await c.llm.complete(c.protocol.answer_messages(q, _context(c, q, budget, uncapped)))
            with stage("judge"):
                await c.protocol.judge(q, {"question_id": q.id, "answer": result.text}, c.dataset, c.judge)

    try:
        await asyncio.gather(*(one(q) for q in c.questions))
    finally:
        await c.aclose_clients()  # inside the loop, before asyncio.run returns
