"""GSW (Generative Semantic Workspace) as a MemoryMethod: `method=gsw`.

Index: per chapter, coreference rewrite -> 3-sentence chunks -> (situating context) -> Operator
-> space-time coupling -> Reconciler (chunks in order; per chapter or across the book) ->
entity summaries per (chapter, entity). Each chapter's workspace is saved as JSON (plus a text
and a DOT rendering) as soon as it is finished, so an interrupted index resumes from the last
finished chapter; every model call is cached as well. Retrieve: question entities -> matching
-> rerank -> entries from at most `cap` chapters -> the shared model answers from them.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from memeval.datasets.types import Corpus, Question, Unit
from memeval.model_access.errors import JsonOutputError, ModelCallError
from memeval.settings_history import HashedAsAbsent, Introduced

from ..base import IndexCounters, IndexStore, MemoryMethod, Retrieval, Services, unit_title
from ..stored_claims import StoredClaim, read_json
from .counters import gsw_counters
from .guard import ALL_EXAMPLES, GUARD_VERSION
from .kinds import KINDS_VERSION
from .operator import SPACETIME_COMPACT_STOP, OperatorStages, StageSettings, outputs_of
from .prompts import EXAMPLE_NER, EXAMPLE_PASSAGE, PROMPT_VERSION, WIRES, ner_messages
from .qa import Entry, NameMatcher, entries_from, format_context, rank, select
from .reconciler import Reconciler, chunk_workspace
from .render import to_dot
from .schemas import QuestionEntities
from .summaries import entities_by_chapter, summarise
from .wire import WIRE_VERSION
from .workspace import ChunkRecord, FactIndex, Workspace, render_text


@dataclass
class GSWIndex:
    corpus: Corpus
    entries: list[Entry]
    matcher: NameMatcher
    titles: dict[str, str]
    vectors: np.ndarray | None = None  # one row per entry (summary or verb-phrase text)
    name_vectors: np.ndarray | None = None  # ner_embedding: one row per distinct name
    name_entries: list[list[int]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


@dataclass
class ReconcileSettings:
    """The Reconciler's settings (its keyword arguments), part of the index identity."""

    resolution: str
    er_candidates: int
    er_threshold: float
    forward_falling: bool
    ff_max_questions: int
    ff_window: int
    ff_max_tokens: int
    space_time: bool
    space_time_join: str  # inherit: a joining entity takes the node's bound place/time; since: only later values
    validate_kinds: bool  # kinds.py: names that are noun phrases, places that are not people, times that are times


@dataclass
class WorkspaceSettings:
    """The rest of what defines a GSW index: reconciliation scope, summaries, chapters read."""

    reconcile_scope: str
    summary_min_mentions: int
    summary_max_tokens: int
    max_chapters: int | None
    summary_version: int  # 1: "at most five sentences"; 2: every fact, within summary_max_tokens (the paper)


class GSW(MemoryMethod):
    batch_index = True  # no index call waits on another chapter's reply: the Batch API can take them
    output_guard_version = GUARD_VERSION  # every extraction passes guard.py (no switch turns it off)
    # the summary prompt's frame (its user message's field names, and the parts of a fact it
    # names, which the model writes back as headings: "**Roles and States:**")
    context_labels = ("Facts in story order", "Chapter", "Entity", "Roles and States", "Roles", "States",
                      "Actions", "(shared with linked entities)", "answered in")  # + workspace.py's fact lines
    # the worked example's passage and reply values and every older prompt version's (guard.py)
    prompt_examples = (EXAMPLE_PASSAGE, *(x for x in EXAMPLE_NER if isinstance(x, str)), *ALL_EXAMPLES)
    # settings added after runs were saved without them: what their absence meant (upgrade layer)
    settings_history = (
        HashedAsAbsent("chunk_min_words", None),
        Introduced("stop_repeats", False, hashed_as_absent=True),
        # issue 26 (run format 3): the conversation frame, session dates, space-time inheritance,
        # kind checks and the paper's summary budget; saved runs keep the behaviour they were made with
        Introduced("speaker_frame", False, until_format=3, hashed_as_absent=True),
        Introduced("unit_dates", False, until_format=3, hashed_as_absent=True),
        Introduced("space_time_join", "since", until_format=3, hashed_as_absent=True),
        Introduced("validate_kinds", False, until_format=3, hashed_as_absent=True),
        Introduced("summary_version", 1, until_format=3, hashed_as_absent=True),
        # issue 27: the compact wire format (Operator and space-time replies as lines); saved runs
        # were made with JSON replies
        Introduced("wire", "json", until_format=None, hashed_as_absent=True),
    )

    def __init__(self, services: Services, name: str | None = None, *,
                 chunk_sentences: int = 3, chunk_overlap: int = 0, chunk_min_words: int | None = None,
                 coreference: bool = True,
                 situating_context: bool = True, space_time: bool = True, reconcile_scope: str = "chapter",
                 entity_resolution: str = "exact", er_candidates: int = 3, er_threshold: float = 0.8,
                 forward_falling: bool = True, ff_max_questions: int = 12, ff_window: int = 50,
                 summary_min_mentions: int = 1, max_chapters: int | None = None,
                 max_concurrent_chapters: int = 8, write_renderings: bool = True,
                 coref_max_tokens: int = 2048, situate_max_tokens: int = 120, operator_max_tokens: int = 1500,
                 spacetime_max_tokens: int = 1000, ff_max_tokens: int = 500, summary_max_tokens: int = 500,
                 qa_input: str = "summaries", match: str = "string", rerank: bool = True,
                 match_top_k: int = 20, ner_match_threshold: float = 0.8, ner_match_top_k: int = 5,
                 max_entries: int | None = 17, ner_max_tokens: int = 200, stop_repeats: bool = True,
                 speaker_frame: bool = True, unit_dates: bool = True, space_time_join: str = "inherit",
                 summary_version: int = 2, validate_kinds: bool = True, wire: str = "compact"):
        super().__init__(services, name)
        checks = {"reconcile_scope": (reconcile_scope, {"chapter", "global"}),
                  "entity_resolution": (entity_resolution, {"exact", "embedding_llm"}),
                  "qa_input": (qa_input, {"summaries", "verb_phrases"}),
                  "match": (match, {"string", "embedding", "ner_embedding"}),
                  "space_time_join": (space_time_join, {"inherit", "since"}),
                  "summary_version": (summary_version, {1, 2}), "wire": (wire, set(WIRES))}
        for key, (value, allowed) in checks.items():
            if value not in allowed:
                raise ValueError(f"gsw {key} must be one of {sorted(allowed)}, not {value!r}")
        self.settings = StageSettings(
            chunk_sentences=chunk_sentences, chunk_overlap=chunk_overlap, chunk_min_words=chunk_min_words,
            coreference=coreference,
            situating_context=situating_context, space_time=space_time, coref_max_tokens=coref_max_tokens,
            situate_max_tokens=situate_max_tokens, operator_max_tokens=operator_max_tokens,
            spacetime_max_tokens=spacetime_max_tokens, stop_repeats=stop_repeats, speaker_frame=speaker_frame,
            unit_dates=unit_dates, wire=wire)
        self.space_time = space_time
        self.reconcile = ReconcileSettings(
            resolution=entity_resolution, er_candidates=er_candidates, er_threshold=er_threshold,
            forward_falling=forward_falling, ff_max_questions=ff_max_questions, ff_window=ff_window,
            ff_max_tokens=ff_max_tokens, space_time=space_time, space_time_join=space_time_join,
            validate_kinds=validate_kinds)
        self.workspace = WorkspaceSettings(reconcile_scope, summary_min_mentions, summary_max_tokens,
                                           max_chapters, summary_version)
        self.reconcile_scope = reconcile_scope
        self.recon_kw = asdict(self.reconcile)
        self.summary_min_mentions = summary_min_mentions
        self.summary_max_tokens = summary_max_tokens
        self.max_chapters = max_chapters
        self.max_concurrent_chapters = max_concurrent_chapters
        self.write_renderings = write_renderings
        self.qa_input, self.match, self.rerank = qa_input, match, rerank
        self.match_top_k, self.max_entries = match_top_k, max_entries
        self.ner_match_threshold, self.ner_match_top_k = ner_match_threshold, ner_match_top_k
        self.ner_max_tokens = ner_max_tokens

    def params(self) -> dict[str, Any]:
        """What defines the index: the fields of its three settings records (QA settings are not
        among them: ablations of retrieval share one index), and the compact wire's and the kind
        checks' versions when they are on."""
        wire = {"wire_version": WIRE_VERSION} if self.settings.wire == "compact" else {}
        if wire and self.settings.stop_repeats:
            wire["spacetime_stop"] = SPACETIME_COMPACT_STOP  # compact space-time replies are cut too
        kinds = {"kinds_version": KINDS_VERSION} if self.reconcile.validate_kinds else {}
        return {"prompt_version": PROMPT_VERSION, "guard_version": GUARD_VERSION, **wire, **kinds, **asdict(self.settings),
                **asdict(self.workspace), **asdict(self.reconcile)}

    @classmethod
    def index_counters(cls, folder: Path) -> IndexCounters | None:
        return gsw_counters(folder)

    @classmethod
    def index_claims(cls, folder: Path) -> list[StoredClaim] | None:
        """Each fact line of each entity's chapter summary ("- [12.6] when: ..."): its chunk
        number names the chapter it came from."""
        if not (folder / "chapters").exists():
            return None
        line_re = re.compile(r"^- \[(\d+)\.\d+\] [a-z ]+: (.+)$")
        out: list[StoredClaim] = []
        for path in sorted((folder / "chapters").glob("*.json")):
            data = read_json(path)
            for ent in ((data.get("entities") or {}) if isinstance(data, dict) else {}).values():
                for chapter, text in (ent.get("summaries") or {}).items():
                    for m in filter(None, (line_re.match(line.strip()) for line in str(text).splitlines())):
                        out.append(StoredClaim(m.group(2), (m.group(1) or str(chapter),),
                                               f"GSW summary of {ent.get('name')}"))
        return out

    def _title(self, u: Unit) -> str:
        """How summaries and the answer context name a unit: with its date under `unit_dates`."""
        return unit_title(u) if self.settings.unit_dates else u.title or u.id

    @property
    def llm(self) -> Any:
        return self.services.indexer

    def _reconciler(self, ws: Workspace) -> Reconciler:
        return Reconciler(ws, llm=self.llm, embedder=self.services.embedder, **self.recon_kw)

    # -- indexing --------------------------------------------------------------------------
    async def build_index(self, corpus: Corpus) -> GSWIndex:
        store = self.services.store(corpus.id)
        units = list(corpus.units[:self.max_chapters] if self.max_chapters else corpus.units)
        positions = {u.id: u.position for u in corpus.units}
        stats: Counter[str] = Counter()
        if self.reconcile_scope == "chapter":
            entries = await self._index_chapters(units, store, positions, stats)
        else:
            entries = await self._index_global(units, store, positions, stats)
        index = await self._qa_index(corpus, entries, dict(stats))
        store.save_json("index_stats.json", index.stats)
        return index

    async def _index_chapters(self, units: list[Unit], store: IndexStore, positions: dict[str, int],
                              stats: Counter[str]) -> list[Entry]:
        sem = asyncio.Semaphore(self.max_concurrent_chapters)

        async def one(u: Unit) -> list[Entry]:
            name = f"chapters/{u.id}"
            if store.exists(f"{name}.json"):
                ws = Workspace.from_json(store.load_json(f"{name}.json"))
                stats["chapters_resumed"] += 1
                if ws.meta.get("summary_failures"):  # try the failed summaries again
                    await self._summarise(ws, u)
                    self._save(store, name, ws)
            else:
                async with sem:
                    ws = await self._chapter(u)
                self._save(store, name, ws)
            _count(ws, stats)
            return entries_from(ws, positions, self.space_time)

        per_chapter = await asyncio.gather(*(one(u) for u in units))
        return [e for chunk in per_chapter for e in chunk]

    async def _chapter(self, u: Unit) -> Workspace:
        """One chapter, start to finish: extraction, reconciliation, summaries."""
        extracted, coref = await OperatorStages(self.llm, self.settings).extract(u)
        ws = Workspace(scope=u.id, chapters=[u.id], meta={"coref": coref, "title": self._title(u)})
        rec = self._reconciler(ws)
        for record, op, st in extracted:
            await rec.add(self._chunk_workspace(rec, record, op, st))
        ws.meta["reconciler"] = rec.stats
        await self._summarise(ws, u)
        return ws

    def _chunk_workspace(self, rec: Reconciler, record: ChunkRecord, op: Any, st: Any) -> Workspace:
        """A chunk's replies through the guard, and the kind checks under `validate_kinds`."""
        persons = rec.persons if self.reconcile.validate_kinds else None
        return chunk_workspace(record, op, st, persons, framed=self.settings.speaker_frame)

    async def _summarise(self, ws: Workspace, u: Unit) -> None:
        counts = await summarise(self.llm, ws, u.id, self._title(u), min_mentions=self.summary_min_mentions,
                                 space_time=self.space_time, max_tokens=self.summary_max_tokens,
                                 stop_repeats=self.settings.stop_repeats, version=self.workspace.summary_version)
        ws.meta["summaries"] = {**counts, "summaries_llm": counts["summaries_llm"] + int(
            (ws.meta.get("summaries") or {}).get("summaries_llm", 0))}
        if not ws.meta.get("summary_failures"):
            ws.meta.pop("summary_failures", None)

    async def _index_global(self, units: list[Unit], store: IndexStore, positions: dict[str, int],
                            stats: Counter[str]) -> list[Entry]:
        """One workspace across the book: extraction per chapter (saved, resumable), then one
        reconciliation pass in story order, then summaries per (chapter, entity)."""
        final = "global/workspace.json"
        if store.exists(final):
            ws = Workspace.from_json(store.load_json(final))
            stats["chapters_resumed"] += len(units)
        else:
            sem = asyncio.Semaphore(self.max_concurrent_chapters)

            async def extract(u: Unit) -> tuple[list[ChunkRecord], str]:
                name = f"extract/{u.id}.json"
                if store.exists(name):
                    data = store.load_json(name)
                    return [ChunkRecord.model_validate(c) for c in data["chunks"]], data["coref"]
                async with sem:
                    extracted, coref = await OperatorStages(self.llm, self.settings).extract(u)
                records = [r for r, _, _ in extracted]
                store.save_json(name, {"coref": coref, "chunks": [r.model_dump(mode="json") for r in records]})
                return records, coref

            per_chapter = await asyncio.gather(*(extract(u) for u in units))
            ws = Workspace(scope="global", meta={"coref": {u.id: c for u, (_, c) in zip(units, per_chapter,
                                                                                         strict=True)}})
            rec = self._reconciler(ws)
            for records, _ in per_chapter:
                for r in records:
                    op, st = outputs_of(r)
                    await rec.add(self._chunk_workspace(rec, r, op, st))
            ws.meta["reconciler"] = rec.stats
            facts, by_chapter = FactIndex(ws, self.space_time), entities_by_chapter(ws)
            counts = await asyncio.gather(*(summarise(
                self.llm, ws, u.id, self._title(u), min_mentions=self.summary_min_mentions,
                space_time=self.space_time, max_tokens=self.summary_max_tokens, facts=facts, by_chapter=by_chapter,
                stop_repeats=self.settings.stop_repeats, version=self.workspace.summary_version)
                for u in units))
            ws.meta["summaries"] = dict(sum((Counter(c) for c in counts), Counter()))
            if not ws.meta.get("summary_failures"):
                ws.meta.pop("summary_failures", None)
            self._save(store, "global/workspace", ws)
        _count(ws, stats)
        return entries_from(ws, positions, self.space_time)

    def _save(self, store: IndexStore, name: str, ws: Workspace) -> None:
        if self.write_renderings:
            store.path(f"{name}.txt").write_text(render_text(ws), encoding="utf-8")
            store.path(f"{name}.dot").write_text(to_dot(ws), encoding="utf-8")
        store.save_json(f"{name}.json", ws.to_json())  # last: its presence means "finished"

    async def _qa_index(self, corpus: Corpus, entries: list[Entry], stats: dict[str, Any]) -> GSWIndex:
        matcher = NameMatcher()
        for i, e in enumerate(entries):
            matcher.add(i, e.names)
        index = GSWIndex(corpus, entries, matcher, {u.id: self._title(u) for u in corpus.units}, stats=stats)
        emb = self.services.embedder
        if entries and (self.rerank or self.match == "embedding"):
            texts = [(e.verbs_text if self.qa_input == "verb_phrases" else e.summary) or e.name for e in entries]
            index.vectors = await emb.embed(texts, "document")
        if entries and self.match == "ner_embedding":
            owners: dict[str, list[int]] = {}
            for i, e in enumerate(entries):
                for n in dict.fromkeys(e.names):
                    owners.setdefault(n, []).append(i)
            index.name_vectors = await emb.embed(list(owners), "document")
            index.name_entries = list(owners.values())
        stats["entries"] = len(entries)
        return index

    # -- retrieval -------------------------------------------------------------------------
    async def _question_entities(self, text: str) -> tuple[list[str], str | None]:
        """The question's entities, or the error of a failed NER call (recorded in the prediction).
        A query-time call: the answering model's, whatever model indexed (llm_index)."""
        try:
            out, _ = await self.services.llm.complete_json(ner_messages(text), QuestionEntities,
                                                           max_tokens=self.ner_max_tokens)
        except (JsonOutputError, ModelCallError) as exc:
            return [], f"{type(exc).__name__}: {str(exc)[:300]}"
        return [e for e in dict.fromkeys(x.strip() for x in out.entities) if e], None

    async def retrieve(self, index: GSWIndex, question: Question) -> Retrieval:
        cap = self.services.cap.max_units
        extras: dict[str, Any] = {"match": self.match, "rerank": self.rerank, "qa_input": self.qa_input}
        emb = self.services.embedder
        need_q = self.rerank or self.match == "embedding"
        qv = (await emb.embed([question.text], "query"))[0] if need_q and index.vectors is not None else None
        sims = index.vectors @ qv if qv is not None and index.vectors is not None else None
        if self.match == "embedding":
            cands = [] if sims is None else [int(i) for i in np.argsort(-sims)[:self.match_top_k]]
            order = rank(cands, index.entries, sims)
        else:
            ents, ner_error = await self._question_entities(question.text)
            extras["question_entities"] = ents
            extras["ner_ok"] = ner_error is None
            if ner_error is not None:
                extras["ner_error"] = ner_error  # the context is empty because NER failed, not by choice
            found: set[int] = set()
            if self.match == "string":
                for x in ents:
                    found |= index.matcher.match(x)
            elif ents and index.name_vectors is not None:
                qvs = await emb.embed(ents, "query")
                name_sims = index.name_vectors @ qvs.T  # [names, question entities]
                for j in range(len(ents)):
                    col = name_sims[:, j]
                    for i in np.argsort(-col)[:self.ner_match_top_k]:
                        if col[int(i)] >= self.ner_match_threshold:
                            found.update(index.name_entries[int(i)])
            cands = sorted(found)
            order = rank(cands, index.entries, sims if self.rerank else None)
        chosen = select(order, index.entries, cap, self.max_entries)
        units = list(dict.fromkeys(index.entries[i].chapter for i in chosen))
        extras["candidates"] = len(cands)
        extras["chosen"] = [{"chapter": index.entries[i].chapter, "entity": index.entries[i].name,
                             "source": index.entries[i].summary_source,
                             **({"score": round(float(sims[i]), 4)} if sims is not None else {})} for i in chosen]
        extras["index_failures"] = {k: index.stats.get(k, 0) for k in ("operator_failed", "spacetime_failed")}
        text = format_context(index.entries, chosen, index.titles, self.qa_input)
        return Retrieval(text, units, extras)


def _count(ws: Workspace, stats: Counter[str]) -> None:
    """Index statistics: sizes, failures and reconciler activity, summed over workspaces."""
    stats["chapters"] += len(ws.chapters)
    stats["chunks"] += len(ws.chunks)
    for c in ws.chunks:
        if c.status != "ok":
            stats[c.status] += 1
    stats["entities"] += len(ws.entities)
    stats["verb_phrases"] += len(ws.verbs)
    stats["space_time_nodes"] += len(ws.nodes)
    for v in ws.verbs.values():
        for q in v.questions:
            if q.answered_in != q.asked_in:  # asked here but not answered here: forward-falling
                stats["ff_open" if q.is_open() else "ff_answered_later"] += 1
            if q.kind == "predictive":
                stats["predictive_questions"] += 1
    by_chapter = stats.setdefault("guard_by_chapter", {})  # type: ignore[arg-type]
    for c in ws.chunks:
        per = by_chapter.setdefault(c.chapter, {})  # every chapter listed, with zero drops too
        for k, n in c.guard.items():
            stats[f"guard_{k}"] += n
            per[k] = per.get(k, 0) + n
    coref = ws.meta.get("coref")
    for status in (coref.values() if isinstance(coref, dict) else [coref]):
        stats[f"coref_{status}"] += 1
    for key in ("reconciler", "summaries"):
        for k, v in (ws.meta.get(key) or {}).items():
            stats[k] += int(v)
