"""mem0 (mem0ai 2.2.1, open-source `Memory`) through its official package, in its own environment.

Indexing: each unit (session or chapter) is added in corpus order with its date
(methods/external/mem0_ingest.py plans the `add` calls); mem0 extracts memories with one chat call
per add (`response_format: json_object`, no tool calls) through the framework's proxy, so the
cache, usage and cost are the harness's, and stores them in Qdrant (local mode) with SQLite
history in the index folder (workers/mem0_worker.py).

Retrieval: mem0's own `search` (no chat call; one query embedding) returns the top-k memories
per view (one view by default; one per speaker in the vendor recipe). Every memory comes from
exactly one unit's add (mem0 2.2.1 only adds, never merges), so the context cap is applied to the
units the memories came from: memories are taken in score order until `cap` distinct units are
in (then the token cap, dropping the lowest-ranked), and what was dropped is recorded. The shared
answering model answers from the memories; nothing in the context is untraceable to a unit
(`uncapped_text` is empty), and the harness's verbatim audit still checks every context for unit
text beyond the reported units.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memeval.datasets.types import Corpus, Question
from memeval.methods.base import IndexCounters, Retrieval, Services
from memeval.model_access.tokenizer import count_tokens

from ..output_guard import ChunkText
from ..stored_claims import StoredClaim, read_json
from .base import ExternalMethod, WorkerIndex
from .cost_model import CostModel, IndexCall
from .counters import source_copies, structured_calls, worker_index
from .envs import EnvSpec
from .mem0_ingest import INGEST, plan_adds

# Distinctive names from the worked examples of mem0ai 2.2.1's extraction prompt
# (mem0/configs/prompts.py ADDITIVE_EXTRACTION_PROMPT): a stored memory that names one its unit
# never mentions was copied from the prompt (common first names of the examples are left out).
EXAMPLE_NAMES = ("Marcus", "Elena", "Shopify", "Osteria Francescana", "Poppy", "Bailey", "Bajimaya",
                 "Reward Homes", "Stanislavski", "Hitchhiker's Guide", "Ready Player One", "Construct Guardians")


def rank_hits(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One ranking over every view's hits: score descending, then rank within its view."""
    return sorted(hits, key=lambda h: (-(h.get("score") or 0.0), h.get("rank", 0), str(h.get("view"))))


def memory_line(hit: dict[str, Any]) -> str:
    """'<date>: <memory>', the line format of mem0's published LoCoMo search."""
    text = " ".join(str(hit.get("memory", "")).split())
    return f"{hit['timestamp']}: {text}" if hit.get("timestamp") else text


def layout(kept: list[dict[str, Any]], views: list[str], labels: dict[str, str]) -> str:
    """The context: one line per memory in each view's own order; a block per view when several."""
    blocks = []
    for view in views:
        mine = sorted((h for h in kept if h["view"] == view), key=lambda h: h.get("rank", 0))
        if not mine:
            continue
        lines = "\n".join(memory_line(h) for h in mine)
        blocks.append(f"Memories of {labels.get(view) or view}:\n{lines}" if len(views) > 1 else lines)
    return "\n\n".join(blocks)


def cap_hits(hits: list[dict[str, Any]], max_units: int | None, max_tokens: int | None, views: list[str],
             labels: dict[str, str]) -> dict[str, Any]:
    """The memories within the cap: whole units in ranking order, then the token cap."""
    ranked = rank_hits(hits)
    before = list(dict.fromkeys(h["unit"] for h in ranked))
    keep_units = set(before if max_units is None else before[:max_units])
    kept = [h for h in ranked if h["unit"] in keep_units]
    dropped_for_tokens = 0
    context = layout(kept, views, labels)
    while max_tokens is not None and kept and count_tokens(context) > max_tokens:
        kept.pop()  # the lowest-ranked memory
        dropped_for_tokens += 1
        context = layout(kept, views, labels)
    units = list(dict.fromkeys(h["unit"] for h in kept))
    inside = {id(h) for h in kept}
    return {"context_text": context, "units": units, "units_before_cap": before,
            "dropped_units": [u for u in before if u not in set(units)],
            "memories_returned": len(hits), "memories_in_context": len(kept),
            "memories_dropped_for_tokens": dropped_for_tokens,
            "memories": [{"view": h["view"], "rank": h.get("rank"), "score": h.get("score"), "unit": h["unit"],
                          "in_context": id(h) in inside} for h in ranked]}


def mem0_counters(folder: Path) -> IndexCounters | None:
    """Per unit: memories mem0 stored from its adds (package/memories.json, written by the worker);
    copies of the extraction prompt's example names; no entity names (mem0 stores sentences)."""
    path = folder / "package" / "memories.json"
    if not path.exists():
        return None
    dump = json.loads(path.read_text(encoding="utf-8"))
    units = [str(u) for u in dump.get("units", [])]
    per_unit = dict.fromkeys(units, 0)
    for m in dump.get("memories", []):
        per_unit[str(m.get("unit"))] = per_unit.get(str(m.get("unit")), 0) + 1
    texts = dump.get("unit_texts") or {}
    copies: list[str] = []
    for m in dump.get("memories", []):
        memory = ChunkText(str(m.get("memory", "")))
        unit = ChunkText(str(texts.get(str(m.get("unit")), "")))
        copies += [n for n in EXAMPLE_NAMES if memory.has_phrase(n) and not unit.has_phrase(n)]
    return IndexCounters(
        units=len(units), empty={"memories": [sum(1 for u in units if not per_unit.get(u)), len(units)]},
        example_copies=len(copies), copy_samples=sorted(set(copies))[:5], values=len(dump.get("memories", [])),
        extra={"memories": len(dump.get("memories", [])), "memories_per_unit": per_unit,
               "views": dump.get("views", []), **_extraction_calls(folder),
               **({"source_copies": source_copies([(str(m.get("memory", "")), str(texts.get(str(m.get("unit")), "")))
                                                   for m in dump.get("memories", [])])} if texts else {})})


def _extraction_calls(folder: Path) -> dict[str, Any]:
    """mem0's extraction calls and the replies it could not parse (and so dropped), per the
    worker's count in index_done.json; an index built before the worker counted them has none."""
    rows = (worker_index(folder).get("per_unit") or {}).values()
    if not rows or any("chat_attempts" not in r for r in rows):
        return {}
    return {"structured_calls": structured_calls(list(rows))}


# the worker's telemetry switch: no PostHog events, no notice config fetched from the web
WORKER_ENV = {"MEM0_TELEMETRY": "False"}


class Mem0Method(ExternalMethod):
    """mem0's Memory: add per unit in order with its date, search top-k per view, the cap on units."""

    # The uv-compiled, hashed lock (scripts/lock_env.sh baseline mem0) installs hashed, with no resolver:
    # given it as plain requirements, pip resolved qdrant-client's `httpx[http2]>=0.20.0` to httpx
    # 0.29.0 past mem0's 0.28.1 pin once PyPI served it, and refused it unhashed (2026-12-02).
    env_spec = EnvSpec("mem0", "mem0.txt", worker="mem0_worker.py", probe="mem0", hashed=True,
                       build_cost=("200 MB", "about a minute"))
    # mem0ai 2.2.1 with the session plan (`ingest: session`): one fact-extraction call per add, an
    # add per session or chapter (its whole text in the prompt); search makes no call. Measured:
    # conv-30's first 8 sessions, 8 calls of 8.8-9.7k prompt tokens; EpBench-20 at 1.5B
    # (2026-12-04, llama-server log), 8,558 prompt tokens for a chapter of about 550, and replies
    # of 719 and 672 tokens under method.max_tokens=1024. So the template is about 8k.
    cost_model = CostModel(calls=(IndexCall("fact extraction (one per add)", 1, 8000, 700),),
                           context_tokens=600, embed_per_chunk=10 * 40, assumes={"ingest": "session"},
                           not_modelled="mem0's speaker-view plan (an add per 2 messages per speaker) is not modelled")
    # the extraction prompt's distinctive example names (EXAMPLE_NAMES), for the phrase-copy health check
    prompt_examples = EXAMPLE_NAMES

    def __init__(self, services: Services, name: str | None = None, ingest: str = "session",
                 messages_per_add: int | None = None, top_k: int = 20, temperature: float | None = None,
                 max_tokens: int | None = None, top_p: float | None = None,
                 custom_instructions: str | None = None, **kw: Any):
        super().__init__(services, name, **kw)
        if ingest not in INGEST:
            raise ValueError(f"ingest must be one of {INGEST}, not {ingest!r}")
        if self.answer_with != "shared":
            raise ValueError("mem0's open-source Memory has no answer step of its own (Memory.chat is not "
                             "implemented in mem0ai 2.2.1): use answer_with=shared")
        if top_k < 1:
            raise ValueError("top_k must be at least 1")
        self.top_k = top_k
        self._settings: dict[str, Any] = {"ingest": ingest, "messages_per_add": messages_per_add}
        for key, value in (("temperature", temperature), ("max_tokens", max_tokens), ("top_p", top_p),
                           ("custom_instructions", custom_instructions)):
            if value is not None:  # None: the package's own default (and no key: old index names hold)
                self._settings[key] = value
        self._plans: dict[str, dict[str, Any]] = {}

    @classmethod
    def index_counters(cls, folder: Path) -> IndexCounters | None:
        return mem0_counters(folder)

    @classmethod
    def index_claims(cls, folder: Path) -> list[StoredClaim] | None:
        """Each stored memory, with the unit whose add made it (package/memories.json)."""
        if not (folder / "package" / "memories.json").exists():
            return None
        rows = (read_json(folder / "package" / "memories.json") or {}).get("memories") or []
        return [StoredClaim(str(m["memory"]), None if m.get("unit") is None else (str(m["unit"]),), "mem0 memory")
                for m in rows if str(m.get("memory") or "").strip()]

    def settings(self) -> dict[str, Any]:
        return dict(self._settings)

    def plan(self, corpus: Corpus) -> dict[str, Any]:
        if corpus.id not in self._plans:
            self._plans[corpus.id] = plan_adds(corpus, self._settings["ingest"], self._settings["messages_per_add"])
        return self._plans[corpus.id]

    def worker_env_extra(self) -> dict[str, str]:
        return dict(WORKER_ENV)

    def index_payload(self, corpus: Corpus) -> dict[str, Any]:
        p = self.plan(corpus)
        return {"adds": p["adds"], "views": p["views"], "units": p["units"]}

    async def build_index(self, corpus: Corpus) -> WorkerIndex:
        index = await super().build_index(corpus)
        p = self.plan(corpus)
        index.info = {**index.info, "ingest": self._settings["ingest"], "views": p["views"],
                      "unit_dates": p["dates"], "planned_adds": len(p["adds"])}
        return index

    async def retrieve(self, index: WorkerIndex, question: Question) -> Retrieval:
        p = self.plan(index.corpus)
        reply = await self._job(index, "search", {"question": question.text, "views": p["views"],
                                                  "top_k": self.top_k}, self.retrieve_timeout_s)
        hits = reply["result"]["hits"]
        known = {u.id for u in index.corpus.units}
        strays = sorted({str(h.get("unit")) for h in hits if h.get("unit") not in known})
        if strays:
            raise RuntimeError(f"mem0 returned memories of units not in corpus {index.corpus.id}: {strays[:5]}")
        cap = self.services.cap
        capped = cap_hits(hits, cap.max_units, cap.max_tokens, p["views"], p["view_labels"])
        extras = {"package": self.env_name, "worker_seconds": reply.get("seconds"), "top_k": self.top_k,
                  "views": p["views"], "empty_search": not hits, "uncapped_text": [],
                  "sampling_requested": reply["sampling_requested"], "timings": reply["result"].get("timings"),
                  **{k: v for k, v in capped.items() if k not in {"context_text", "units"}}}
        return Retrieval(capped["context_text"], capped["units"], extras)
