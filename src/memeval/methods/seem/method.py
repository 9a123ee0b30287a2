"""SEEM as a MemoryMethod: `method=seem` (ablations: seem_no_fusion, seem_no_rpe, seem_no_graph,
seem_dense_only; `mode: incremental` builds the memory in 4 chronological segments).

Index: passages -> one frame call (+ one facts call) per passage, saved per passage under
`_passages/<content key>.json` in the index folder (shared by every corpus of the run, so a
LongMemEval-S session that appears in many haystacks is extracted once) -> associative fusion
in corpus order -> graph layer -> `memory.json`, `graph.json`, `summary.json` per corpus.
Retrieve: dense + BM25 + personalised PageRank over frames, RRF, then Reverse Provenance
Expansion under the cap (see rpe.py for the context layout).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memeval.datasets.types import Corpus, Question
from memeval.settings_history import HashedAsAbsent, Introduced

from ..base import IndexCounters, IndexStore, MemoryMethod, Retrieval, Services
from ..stored_claims import StoredClaim, read_json
from .counters import seem_counters
from .frames import Frame, Passage, extract_passage, frame_from_record, retry_counts, split_passages
from .fusion import Fusion, Memory, decision_counts, embed_frames
from .graph import (
    GraphLayer,
    build_graph,
    passage_scores,
    personalised_pagerank,
    question_seeds,
    top_facts,
)
from .guard import GUARD_VERSION
from .prompts import (
    EXAMPLE_FACTS,
    EXAMPLE_FRAME,
    EXAMPLE_PASSAGE,
    EXAMPLE_VALUES,
    RETRY_VERSION,
    prompt_tag,
)
from .retrieval import BM25Frames, dense_ranking, graph_ranking, rrf
from .rpe import FRAME_DATES, FRAME_SOURCES, expand, fit_tokens, render_context, shown_frames
from .veto import DateParts, dates_in

RETRIEVERS = {"dense", "bm25", "ppr"}


@dataclass
class SEEMIndex:
    corpus: Corpus
    passages: dict[str, Passage]
    memory: Memory
    graph: GraphLayer | None
    bm25: BM25Frames
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def order(self) -> dict[str, int]:
        return {pid: p.order for pid, p in self.passages.items()}


class SEEM(MemoryMethod):
    batch_index = True  # no index call waits on another chapter's reply: the Batch API can take them
    output_guard_version = GUARD_VERSION  # every extraction passes guard.py (no switch turns it off)
    # the worked example's passage (its dialogue: "Passage date:" is the real passages' header
    # too), frame and facts (prompts.py), and the older versions' values
    prompt_examples = (EXAMPLE_PASSAGE.split("Passage:", 1)[-1], EXAMPLE_FRAME["summary"],
                       *(str(v) for e in EXAMPLE_FRAME["events"] for v in e.values() if isinstance(v, str)),
                       *(str(v) for f in EXAMPLE_FACTS["facts"] for v in f.values()), *EXAMPLE_VALUES)
    # settings added after runs were saved without them: what their absence meant (upgrade layer)
    settings_history = (
        Introduced("frame_sources", "any_kept"),
        Introduced("frame_dates", "as_extracted"),
        HashedAsAbsent("passage_turns", None),
        # issue 26: the same-event-first judge, the veto before it, the frame retry
        Introduced("prompt_version", 2, until_format=None),
        Introduced("fusion_veto_days", None, until_format=None, hashed_as_absent=True),
        Introduced("frame_retry", False, until_format=None),
        HashedAsAbsent("frame_retry", None),  # params() holds the retry prompt's version, None when off
    )

    def __init__(self, services: Services, name: str | None = None, *, mode: str = "batch",
                 segments: int = 4, window_turns: int | None = None, passage_turns: int | None = None,
                 max_passages: int | None = None, prompt_version: int = 3,
                 frame_retry: bool = True, fusion: bool = True, fusion_top_k: int = 3, fusion_threshold: float = 0.6,
                 fusion_max_provenance: int | None = 8, fusion_veto_days: int | None = 3,
                 graph: bool = True, node_merge_threshold: float = 0.9, rpe: bool = True,
                 retrievers: list[str] | tuple[str, ...] = ("dense", "bm25", "ppr"), top_k: int = 5,
                 candidates: int = 50, rrf_k: int = 60, ppr_damping: float = 0.5, seed_top_k: int = 5,
                 seed_threshold: float = 0.5, top_facts: int = 10, max_concurrent_passages: int = 4,
                 frame_max_tokens: int = 700, facts_max_tokens: int = 450, judge_max_tokens: int = 160,
                 merge_max_tokens: int = 700, extraction_key: str = "date_and_text",
                 frame_sources: str = "all_kept", frame_dates: str = "spoken"):
        super().__init__(services, name)
        if mode not in {"batch", "incremental"}:
            raise ValueError(f"seem mode must be 'batch' or 'incremental', not {mode!r}")
        bad = set(retrievers) - RETRIEVERS
        if bad or not retrievers:
            raise ValueError(f"seem retrievers must be a non-empty subset of {sorted(RETRIEVERS)}, not {list(retrievers)}")
        if "ppr" in retrievers and not graph:
            retrievers = [r for r in retrievers if r != "ppr"]  # no graph, no PageRank
        if extraction_key not in {"date_and_text", "text"}:
            raise ValueError(f"seem extraction_key must be 'date_and_text' or 'text', not {extraction_key!r}")
        self.with_date = extraction_key == "date_and_text"
        if frame_sources not in FRAME_SOURCES or frame_dates not in FRAME_DATES:
            raise ValueError(f"seem frame_sources must be one of {FRAME_SOURCES} and frame_dates one of "
                             f"{FRAME_DATES}, not {frame_sources!r} / {frame_dates!r}")
        self.frame_sources, self.frame_dates = frame_sources, frame_dates  # context only (rpe.py)
        if top_k < 1 or segments < 1:
            raise ValueError("seem top_k and segments must be >= 1")
        self.mode, self.segments, self.window_turns, self.max_passages = mode, segments, window_turns, max_passages
        self.passage_turns = passage_turns
        split_passages(Corpus("check", ()), window_turns, max_passages, passage_turns)  # settings check
        self.prompt_tag, self.frame_retry = prompt_tag(prompt_version), frame_retry
        self.fusion_on, self.graph_on, self.rpe = fusion, graph, rpe
        self.fusion = Fusion(services.indexer, services.embedder, top_k=fusion_top_k, threshold=fusion_threshold,
                             judge_max_tokens=judge_max_tokens, merge_max_tokens=merge_max_tokens,
                             max_provenance=fusion_max_provenance, prompt_version=prompt_version,
                             veto_days=fusion_veto_days)
        self.node_merge_threshold = node_merge_threshold
        self.retrievers = list(retrievers)
        self.top_k, self.candidates, self.rrf_k = top_k, candidates, rrf_k
        self.ppr_damping, self.seed_top_k, self.seed_threshold = ppr_damping, seed_top_k, seed_threshold
        self.n_facts = top_facts
        self.max_concurrent_passages = max_concurrent_passages
        self.frame_max_tokens, self.facts_max_tokens = frame_max_tokens, facts_max_tokens

    @classmethod
    def index_counters(cls, folder: Path) -> IndexCounters | None:
        return seem_counters(folder)

    @classmethod
    def index_claims(cls, folder: Path) -> list[StoredClaim] | None:
        """Each frame's summary and each event (participants and action; place, reason and
        method apart), with the passages of the frame's provenance."""
        if not (folder / "memory.json").exists():
            return None
        out: list[StoredClaim] = []
        for frame in (read_json(folder / "memory.json") or {}).get("frames") or []:
            units = tuple(str(u) for u in frame.get("provenance") or ()) or None
            fid = frame.get("id")
            if frame.get("summary"):
                out.append(StoredClaim(str(frame["summary"]), units, f"SEEM {fid} summary"))
            for ev in frame.get("events") or []:
                who = " and ".join(str(p) for p in ev.get("participants") or [])
                text = " ".join(x for x in (who, str(ev.get("action") or "")) if x).strip()
                if text:
                    out.append(StoredClaim(text, units, f"SEEM {fid} event"))
                out.extend(StoredClaim(str(ev[slot]), units, f"SEEM {fid} {slot}")
                           for slot in ("location", "reason", "method") if str(ev.get(slot) or "").strip())
        return out

    def params(self) -> dict[str, Any]:
        """What defines the index (retrieval settings do not: retrieval ablations share one).
        Keys added since the bundled runs hash as absent at their old value (settings_history)."""
        f = self.fusion
        return {"prompt_version": self.prompt_tag, "guard_version": GUARD_VERSION, "mode": self.mode,
                "segments": self.segments if self.mode == "incremental" else None,
                "window_turns": self.window_turns, "passage_turns": self.passage_turns, "with_date": self.with_date,
                "max_passages": self.max_passages,
                "frame_retry": RETRY_VERSION if self.frame_retry else None, "fusion": self.fusion_on,
                "fusion_top_k": f.top_k, "fusion_threshold": f.threshold,
                "fusion_max_provenance": f.max_provenance, "fusion_veto_days": f.veto_days, "graph": self.graph_on,
                "node_merge_threshold": self.node_merge_threshold, "frame_max_tokens": self.frame_max_tokens,
                "facts_max_tokens": self.facts_max_tokens, "judge_max_tokens": f.judge_max_tokens,
                "merge_max_tokens": f.merge_max_tokens}

    # -- indexing --------------------------------------------------------------------------
    def _key(self, p: Passage) -> str:
        return p.key if self.with_date else p.text_key

    async def _records(self, passages: list[Passage], shared: IndexStore, stats: dict[str, int]) -> dict[str, dict]:
        """Per-passage extraction, resumable: a finished passage's record is saved at once."""
        sem = asyncio.Semaphore(self.max_concurrent_passages)

        async def one(p: Passage) -> tuple[str, dict]:
            name = f"{self._key(p)}.json"
            if shared.exists(name):
                stats["passages_resumed"] += 1
                return p.id, shared.load_json(name)
            async with sem:
                rec = await extract_passage(self.services.indexer, p, graph=self.graph_on,
                                            frame_max_tokens=self.frame_max_tokens,
                                            facts_max_tokens=self.facts_max_tokens, with_date=self.with_date,
                                            retry=self.frame_retry)
            shared.save_json(name, rec)
            return p.id, rec

        return dict(await asyncio.gather(*(one(p) for p in passages)))

    async def build_index(self, corpus: Corpus) -> SEEMIndex:
        t0 = time.perf_counter()
        store, shared = self.services.store(corpus.id), self.services.store("_passages")
        passages = split_passages(corpus, self.window_turns, self.max_passages, self.passage_turns)
        by_id = {p.id: p for p in passages}
        order = {p.id: p.order for p in passages}
        if store.exists("memory.json") and store.exists("summary.json"):
            memory = Memory.from_json(store.load_json("memory.json"))
            stats = store.load_json("summary.json")
            records = await self._records(passages, shared, {"passages_resumed": 0})
            stats["loaded_from_store"] = True
        else:
            stats = {"passages_resumed": 0}
            memory, records = await self._build_memory(passages, order, shared, store, stats)
        memory.vectors = await embed_frames(self.services.embedder, memory.frames)
        graph = None
        if self.graph_on:
            graph = await build_graph(self.services.embedder,
                                      [(p.id, records[p.id].get("facts", [])) for p in passages],
                                      self.node_merge_threshold)
        index = SEEMIndex(corpus, by_id, memory, graph, BM25Frames([f.text() for f in memory.frames]))
        if not stats.get("loaded_from_store"):
            stats.update(self._stats(passages, records, memory, graph, time.perf_counter() - t0))
            if graph is not None:
                store.save_json("graph.json", graph.to_json())
            store.save_json("summary.json", stats)
            store.save_json("memory.json", memory.to_json())  # last: its presence means "finished"
        stats["load_seconds"] = round(time.perf_counter() - t0, 3)
        index.stats = stats
        return index

    async def _build_memory(self, passages: list[Passage], order: dict[str, int], shared: IndexStore,
                            store: IndexStore, stats: dict[str, int]) -> tuple[Memory, dict[str, dict]]:
        memory = Memory()
        self.fusion.reset()
        written = self._written(passages)
        if self.mode == "batch":
            records = await self._records(passages, shared, stats)
            await self._fuse(memory, self._frames(memory, passages, records), order, "batch", written)
            return memory, records
        records: dict[str, dict] = {}
        for s, seg in enumerate(_segments(passages, self.segments), start=1):
            name = f"segments/{s}.json"
            seg_records = await self._records(seg, shared, stats)  # streamed: extracted segment by segment
            records.update(seg_records)
            if store.exists(name):
                memory = Memory.from_json(store.load_json(name))
                continue
            memory.vectors = await embed_frames(self.services.embedder, memory.frames)
            local = Memory(next_id=memory.next_id)
            await self._fuse(local, self._frames(local, seg, seg_records), order, f"segment{s}:within", written)
            memory.next_id = local.next_id
            memory.decisions.extend(local.decisions)
            memory.vetoed.extend(local.vetoed)
            await self._fuse(memory, local.frames, order, f"segment{s}:across", written)
            store.save_json(name, memory.to_json())
        return memory, records

    def _frames(self, memory: Memory, passages: list[Passage], records: dict[str, dict]) -> list[Frame]:
        return [frame_from_record(memory.new_id(), p.id, records[p.id], p.text) for p in passages]

    def _written(self, passages: list[Passage]) -> dict[str, list[DateParts]] | None:
        """The calendar dates written in each passage: the veto's dates for a frame whose events
        carry none (an EpBench chapter names its day; its frame may hold no event)."""
        if not self.fusion_on or self.fusion.veto_days is None:
            return None
        return {p.id: dates_in(p.text) for p in passages}

    async def _fuse(self, memory: Memory, frames: list[Frame], order: dict[str, int], stage: str,
                    written: dict[str, list[DateParts]] | None = None) -> None:
        if not self.fusion_on:
            memory.frames.extend(frames)
            return
        for f in frames:  # in corpus order: each new frame meets the memory built so far
            await self.fusion.add(memory, f, order, stage, written)

    def _stats(self, passages: list[Passage], records: dict[str, dict], memory: Memory,
               graph: GraphLayer | None, seconds: float) -> dict[str, Any]:
        recs = [records[p.id] for p in passages]
        fusion = {**decision_counts(memory.decisions), "skipped_provenance_limit": self.fusion.skipped}
        if self.fusion.veto_days is not None:  # new keys only where the new settings are on
            fusion["vetoed"] = {k: sum(v["veto"] == k for v in memory.vetoed) for k in ("dates", "participants")}
        extra = {"frame_retry": retry_counts(recs)} if self.frame_retry else {}
        if self.passage_turns or self.window_turns:
            extra["units"] = len({p.unit_id for p in passages})
        return {"passages": len(passages), "distinct_passages": len({self._key(p) for p in passages}),
                "frames_before_fusion": len(passages), "frames_after_fusion": len(memory.frames),
                "frame_failed": sum(r["frame_status"] == "failed" for r in recs),
                "facts_failed": sum(r["facts_status"] == "failed" for r in recs),
                "guard": dict(sum((Counter(r.get("guard", {})) for r in recs), Counter())),
                **extra, "fusion": fusion, **(graph.stats() if graph else {}),
                "build_seconds": round(seconds, 3), "mode": self.mode}

    # -- retrieval -------------------------------------------------------------------------
    async def retrieve(self, index: SEEMIndex, question: Question) -> Retrieval:
        frames = index.memory.frames
        qv = (await self.services.embedder.embed([question.text], "query"))[0]
        rankings: dict[str, list[int]] = {}
        pr: dict[str, float] = {}
        seeds: dict[str, float] = {}
        if "dense" in self.retrievers:
            rankings["dense"] = dense_ranking(index.memory.vectors, qv, self.candidates)
        if "bm25" in self.retrievers:
            rankings["bm25"] = index.bm25.ranking(question.text, self.candidates)
        if index.graph is not None:
            seeds = question_seeds(index.graph, question.text, qv, top_k=self.seed_top_k,
                                   threshold=self.seed_threshold)
            pr = personalised_pagerank(index.graph.graph, seeds, self.ppr_damping)
            if "ppr" in self.retrievers:
                rankings["ppr"] = graph_ranking(frames, passage_scores(pr), self.candidates)
        fused = rrf(rankings, self.rrf_k)[:self.top_k]
        chosen = [frames[i] for i, _ in fused]
        exp = expand(chosen, index.passages, self.services.cap.max_units)
        text, shown, facts = fit_tokens(self.services.cap, exp, lambda kept: self._render(index, chosen, kept, pr),
                                        self.tokens)
        units = list(dict.fromkeys(index.passages[p].unit_id
                                   for p in sorted(exp.kept, key=lambda p: index.passages[p].order)))
        pos = {name: {i: r for r, i in enumerate(rk, start=1)} for name, rk in rankings.items()}
        extras = {
            "retrieved": [{"frame": frames[i].id, "rrf": round(s, 6),
                           "ranks": {n: pos[n].get(i) for n in rankings}} for i, s in fused],
            "frames_shown": [f.id for f in shown],
            "expanded_passages": sorted(exp.kept, key=lambda p: index.passages[p].order),
            "dropped_passages": exp.dropped, "seeds": {k[2:]: round(v, 4) for k, v in seeds.items()},
            "facts": len(facts), "rpe": self.rpe, "retrievers": list(rankings),
        }
        if self.frame_sources == "all_kept":  # retrieved, hidden: a passage of theirs was dropped
            extras["frames_hidden"] = [f.id for f in chosen if f.id not in extras["frames_shown"]]
        return Retrieval(text, units, extras)

    def _render(self, index: SEEMIndex, chosen: list[Frame], kept: list[str],
                pr: dict[str, float]) -> tuple[str, list[Frame], list[dict[str, Any]]]:
        kept_set = set(kept)
        shown = shown_frames(chosen, kept_set, self.frame_sources)
        facts = (top_facts(index.graph, pr, kept_set, self.n_facts, index.order)
                 if index.graph is not None and self.n_facts > 0 else [])
        passages = [index.passages[p] for p in kept] if self.rpe else []
        return (render_context(index.corpus, passages, shown, facts, list(index.passages.values()),
                               self.frame_dates), shown, facts)


def _segments(passages: list[Passage], n: int) -> list[list[Passage]]:
    """n chronological segments of near-equal size (fewer when there are fewer passages)."""
    n = max(1, min(n, len(passages)))
    size, extra = divmod(len(passages), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(passages[start:end])
        start = end
    return [s for s in out if s]
