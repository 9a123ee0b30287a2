"""A documented model of the baselines' calls, for cost estimates without their environments.

The official packages run in their own environments and decide their calls from their own
replies (entities found, communities formed), so they cannot be dry-run like the framework's
methods. Their index calls are modelled per chunk (or per chapter for HippoRAG 2, whose passages
are chapters) from the packages' default pipelines; template sizes are approximate o200k counts
of the packages' prompts, output sizes typical GPT-4o reply lengths. Nothing here is validated
against a scripted run on this machine (the environments are not installed here): treat these
index figures as +-50%. The answer and judge stages are exact in shape: the real answer and
judge prompts are built around a context of the size the package returns within the cap.
"""

from __future__ import annotations

import asyncio
import math
import zlib
from dataclasses import dataclass
from typing import Any

from memeval.datasets.types import Question
from memeval.model_access.dry import CallRecord, DryRecorder
from memeval.model_access.tokenizer import count_tokens
from memeval.model_access.usage import stage


@dataclass(frozen=True)
class IndexCall:
    """One kind of index-time call: how many per chunk, prompt overhead and reply size."""

    what: str
    per_chunk: float
    template_tokens: int
    output_tokens: int
    includes_chunk: bool = True


# Default pipelines (graphrag 3.3 standard, lightrag-hku 1.5.7, hipporag 2.0.0a4).
CALL_MODELS: dict[str, dict[str, Any]] = {
    "graphrag": {"chunk": (1200, 100), "calls": [
        IndexCall("extract_graph", 1, 2300, 800),
        IndexCall("extract_graph gleaning (max_gleanings=1)", 1, 3200, 400),
        IndexCall("summarize_descriptions (~5 merged entities per chunk)", 5, 350, 150, False),
        IndexCall("community_reports (~1 community per chunk over all levels)", 1, 6000, 1500, False),
    ], "query_calls": [], "context_tokens": 12000, "embed_per_chunk": 1200 + 10 * 60},
    "lightrag": {"chunk": (1200, 100), "calls": [
        IndexCall("entity_extraction", 1, 1900, 700),
        IndexCall("entity_extraction gleaning (1)", 1, 2700, 300),
    ], "query_calls": [IndexCall("keywords_extraction", 1, 900, 100, False)],
        "context_tokens": 30000, "embed_per_chunk": 1200 + 15 * 40},
    "hipporag2": {"chunk": None, "calls": [
        IndexCall("ner", 1, 600, 150),
        IndexCall("triple_extraction", 1, 1100, 600),
    ], "query_calls": [IndexCall("recognition_memory (fact filter)", 1, 1800, 100, False)],
        "context_tokens": None, "embed_per_chunk": 1200 + 20 * 30},
    # graphiti-core 0.31.2, per episode (a session; "chunk": None), measured with the scripted
    # server on LoCoMo conv-30 (19 sessions, 166 calls): prompt sizes are the measured means,
    # which hold the episode and up to 10 previous ones (so they grow with the conversation at
    # first); dedupe calls per episode depend on the candidates found; replies are guesses.
    "graphiti": {"chunk": None, "calls": [
        IndexCall("extract_nodes", 1, 7500, 300, False),
        IndexCall("extract_edges", 1, 7200, 800, False),
        IndexCall("dedupe_nodes (0.6 per episode)", 0.6, 7300, 300, False),
        IndexCall("extract_summaries (0.5 per episode)", 0.5, 5500, 600, False),
        IndexCall("dedupe_edges (5.7 per episode)", 5.7, 1100, 30, False),
    ], "query_calls": [], "context_tokens": 400, "embed_per_chunk": 4 * 200},
    # cognee 1.6.5, per session (one chunk each on LoCoMo; longer units split), measured with the
    # scripted server on LoCoMo conv-30 (19 sessions, 39 calls: one graph extraction and one
    # summary per chunk, one connection test per process); replies are guesses.
    "cognee": {"chunk": None, "calls": [
        IndexCall("extract_content_graph", 1, 990, 700),
        IndexCall("summarize_text", 1, 210, 200),
    ], "query_calls": [], "context_tokens": 3400, "embed_per_chunk": 5 * 170,
        # its graph nodes and facts, which it reports as outside the cap: measured on EpBench-20 at
        # 1.5B (2026-12-04), a median context of 2,818 tokens where its 3 chapters hold about 1,650
        "uncapped_tokens": 1200},
    # mem0ai 2.2.1 with the session plan (`ingest: session`): one fact-extraction call per add,
    # an add per session or chapter (its whole text in the prompt); search makes no call.
    # Measured: conv-30's first 8 sessions, 8 calls of 8.8-9.7k prompt tokens; EpBench-20 at
    # 1.5B (2026-12-04, llama-server log), 8,558 prompt tokens for a chapter of about 550, and
    # replies of 719 and 672 tokens under method.max_tokens=1024. So the template is about 8k.
    "mem0": {"chunk": None, "calls": [
        IndexCall("fact extraction (one per add)", 1, 8000, 700),
    ], "query_calls": [], "context_tokens": 600, "embed_per_chunk": 10 * 40},
}


def _chunks(unit_tokens: list[int], chunk: tuple[int, int] | None) -> list[int]:
    if chunk is None:
        return unit_tokens
    size, overlap = chunk
    out = []
    for t in unit_tokens:
        n = max(1, math.ceil((t - overlap) / (size - overlap)))
        out.extend([min(size, math.ceil(t / n) + overlap)] * n)
    return out


def baseline_records(c: Any, recorder: DryRecorder) -> list[CallRecord]:
    """Index records from the call model; answer and judge go through the dry clients."""
    name = str(c.method_cfg.name)
    model = CALL_MODELS.get(name.split("_")[0])
    if model is None:
        raise ValueError(f"no call model for baseline {name!r}; add one to {__name__}.CALL_MODELS")
    if name.startswith("mem0") and c.method_cfg.get("ingest", "session") != "session":
        raise ValueError(f"{name}: mem0's speaker-view plan (an add per 2 messages per speaker) is not "
                         f"modelled; {__name__}.CALL_MODELS['mem0'] prices the session plan only")
    llm, emb = c.llm.display_name, c.embedder.display_name
    indexer = c.indexer.display_name  # index-time calls go to the indexing model (the proxy routes them)
    records: list[CallRecord] = []
    corpora = list(dict.fromkeys(q.corpus_id for q in c.questions))
    for cid in corpora:
        unit_tokens = [count_tokens(u.text) for u in c.dataset.corpora[cid].units]
        for size in _chunks(unit_tokens, model["chunk"]):
            for call in model["calls"]:
                whole, frac = divmod(call.per_chunk, 1)
                for _ in range(int(whole) + (1 if frac else 0)):
                    prompt = call.template_tokens + (size if call.includes_chunk else 0)
                    records.append(CallRecord("index", indexer, prompt, call.output_tokens, False))
            records.append(CallRecord("index", emb, model["embed_per_chunk"], 0, False))
    for _ in c.questions:
        for call in model["query_calls"]:
            records.append(CallRecord("retrieve", llm, call.template_tokens + 30, call.output_tokens, False))
        records.append(CallRecord("retrieve", emb, 30, 0, False))
    asyncio.run(_answer_and_judge(c, model["context_tokens"], model.get("uncapped_tokens", 0)))
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
