"""The Reconciler: merges chunk workspaces, in order, into one persistent workspace.

Per chunk: resolve each entity against the workspace (exact normalised name through a dict, or
embedding candidates checked by the LLM), append its roles and states stamped with the chunk,
add the chunk's verb phrases, couple space and time (a chunk's Space/Time node merges with the
nodes of the entities it links, and its value becomes the current value of every entity on the
merged node), then offer earlier open valence questions of the entities seen again to the LLM
with the new chunk. Every lookup goes through an index, so a chunk costs the same at chunk 10
and at chunk 10,000 (except the optional embedding candidate search, a vector scan).
"""

from __future__ import annotations

import bisect
from collections import deque
from typing import Any

import numpy as np

from model_access.errors import JsonOutputError

from .prompts import forward_messages, same_entity_messages
from .schemas import FFAnswers, OperatorOutput, SameEntity, SpaceTimeOutput
from .workspace import (
    ChunkRecord,
    Entity,
    Kind,
    RoleEntry,
    SpaceTimeNode,
    ValenceQuestion,
    ValueStamp,
    VerbPhrase,
    Workspace,
    normalise_name,
)


def chunk_workspace(chunk: ChunkRecord, op: OperatorOutput | None, st: SpaceTimeOutput | None) -> Workspace:
    """One chunk's Operator (and space-time) output as a small workspace with chunk-local ids."""
    ws = Workspace(scope=chunk.id, chapters=[chunk.chapter])
    ws.add_chunk(chunk)
    if op is None:
        return ws
    chunk.operator = chunk.operator or op.model_dump(mode="json")
    if st is not None:
        chunk.space_time = chunk.space_time or st.model_dump(mode="json")
    local: dict[str, str] = {}
    for e in op.entities:
        if not e.name.strip():
            continue
        if e.id in local:  # a repeated id: keep the first entity under it
            continue
        eid = ws.new_id("e")
        local[e.id] = eid
        ws.entities[eid] = Entity(id=eid, name=e.name.strip(), chunks=[chunk.id], roles=[
            RoleEntry(role=r.role, states=list(r.states), chunk=chunk.id) for r in e.roles if r.role.strip()])
    for v in op.verb_phrases:
        vid = ws.new_id("v")
        qs = [ValenceQuestion(id=ws.new_id("q"), kind=q.kind, question=q.question,
                              answer_ids=[local[a] for a in q.answer_entity_ids if a in local],
                              answer_text=q.answer_text, asked_in=chunk.id,
                              answered_in=chunk.id if (q.answer_entity_ids or q.answer_text.strip()) else None)
              for q in v.questions]
        ws.verbs[vid] = VerbPhrase(id=vid, phrase=v.phrase, chunk=chunk.id, questions=qs)
    for link in st.links if st else []:
        members = list(dict.fromkeys(local[i] for i in link.entity_ids if i in local))
        if not members or not link.value.strip():
            continue
        nid = ws.new_id("s" if link.kind == "space" else "t")
        node = SpaceTimeNode(id=nid, kind=link.kind, entities=members,
                             history=[ValueStamp(value=link.value.strip(), chunk=chunk.id, via=members)])
        ws.nodes[nid] = node
        for m in members:  # an entity in two groups of one kind: the later group wins
            setattr(ws.entities[m], link.kind, nid)
    chunk.id_map = dict(local)
    return ws


class Reconciler:
    """Holds one workspace and the indexes over it; `add` merges the next chunk workspace."""

    def __init__(self, ws: Workspace, *, resolution: str = "exact", llm: Any = None, embedder: Any = None,
                 er_candidates: int = 3, er_threshold: float = 0.8, forward_falling: bool = True,
                 ff_max_questions: int = 12, ff_window: int = 50, ff_max_tokens: int = 500,
                 space_time: bool = True):
        if resolution not in {"exact", "embedding_llm"}:
            raise ValueError("entity_resolution must be 'exact' or 'embedding_llm'")
        if (resolution == "embedding_llm" and (llm is None or embedder is None)) or (forward_falling and llm is None):
            raise ValueError("this reconciler configuration needs an llm (and an embedder for embedding_llm)")
        self.ws = ws
        self.resolution = resolution
        self.llm = llm
        self.embedder = embedder
        self.er_candidates = er_candidates
        self.er_threshold = er_threshold
        self.forward_falling = forward_falling
        self.ff_max_questions = ff_max_questions
        self.ff_window = ff_window
        self.ff_max_tokens = ff_max_tokens
        self.space_time = space_time
        self.stats: dict[str, int] = {k: 0 for k in (
            "chunks_merged", "entities_created", "entities_merged", "nodes_merged", "propagations",
            "ff_offered", "ff_answered", "ff_failed", "er_checks", "er_merged")}
        self._by_name: dict[str, str] = {}
        self._open: dict[str, deque[str]] = {}  # entity id -> its recent open question ids
        self._questions: dict[str, tuple[VerbPhrase, ValenceQuestion]] = {}
        self._vec_ids: list[str] = []
        self._vecs = np.zeros((0, 0), dtype=np.float32)
        self._reindex()

    # -- indexes ---------------------------------------------------------------------------
    def _reindex(self) -> None:
        for e in self.ws.entities.values():
            for n in (e.name, *e.aliases):
                self._by_name.setdefault(normalise_name(n), e.id)
        for v in self.ws.verbs.values():
            self._index_verb(v)

    def _index_verb(self, v: VerbPhrase) -> None:
        for q in v.questions:
            self._questions[q.id] = (v, q)
            if q.is_open():
                for e in v.participants():
                    self._open.setdefault(e, deque(maxlen=self.ff_window)).append(q.id)

    async def _add_vector(self, eid: str, name: str) -> None:
        vec = (await self.embedder.embed([name], "document"))[0]
        if self._vecs.size == 0:
            self._vecs = np.zeros((16, vec.shape[0]), dtype=np.float32)
        if len(self._vec_ids) == self._vecs.shape[0]:  # grow by doubling: amortised O(1)
            self._vecs = np.vstack([self._vecs, np.zeros_like(self._vecs)])
        self._vecs[len(self._vec_ids)] = vec
        self._vec_ids.append(eid)

    # -- entity resolution -----------------------------------------------------------------
    async def _resolve(self, e: Entity) -> str | None:
        for n in (e.name, *e.aliases):
            hit = self._by_name.get(normalise_name(n))
            if hit is not None:
                return hit
        if self.resolution == "exact" or not self._vec_ids:
            return None
        q = (await self.embedder.embed([e.name], "document"))[0]
        sims = self._vecs[:len(self._vec_ids)] @ q
        order = [int(i) for i in np.argsort(-sims)[:self.er_candidates] if sims[int(i)] >= self.er_threshold]
        for i in order:
            cand = self.ws.entities[self._vec_ids[i]]
            self.stats["er_checks"] += 1
            try:
                out, _ = await self.llm.complete_json(
                    same_entity_messages(_describe(cand), _describe(e)), SameEntity, max_tokens=20)
            except JsonOutputError:
                continue
            if out.same:
                self.stats["er_merged"] += 1
                return cand.id
        return None

    # -- merging ---------------------------------------------------------------------------
    async def add(self, cw: Workspace) -> dict[str, str]:
        """Merge one chunk workspace (its single chunk record included); returns its id map."""
        chunk = cw.chunks[0]
        self.ws.add_chunk(chunk)
        if chunk.chapter not in self.ws.chapters:
            self.ws.chapters.append(chunk.chapter)
        self.stats["chunks_merged"] += 1
        mapping: dict[str, str] = {}
        for ce in cw.entities.values():
            target = await self._resolve(ce)
            if target is None:
                target = self.ws.new_id("e")
                self.ws.entities[target] = Entity(id=target, name=ce.name)
                self._by_name.setdefault(normalise_name(ce.name), target)
                self.stats["entities_created"] += 1
                if self.resolution == "embedding_llm":
                    await self._add_vector(target, ce.name)
            else:
                self.stats["entities_merged"] += 1
                self.ws.events.append({"event": "entity_merged", "chunk": chunk.id, "entity": target,
                                       "name": ce.name})
            self._absorb(self.ws.entities[target], ce)
            mapping[ce.id] = target
        if self.space_time:
            for node in cw.nodes.values():
                self._couple(node, [mapping[e] for e in node.entities], chunk.id)
        for v in cw.verbs.values():
            nv = VerbPhrase(id=self.ws.new_id("v"), phrase=v.phrase, chunk=v.chunk, questions=[
                q.model_copy(update={"id": self.ws.new_id("q"), "answer_ids": [mapping[a] for a in q.answer_ids]})
                for q in v.questions])
            self.ws.verbs[nv.id] = nv
            self._index_verb(nv)
        chunk.id_map = {loc: mapping[mid] for loc, mid in chunk.id_map.items() if mid in mapping}
        if self.forward_falling:
            await self._forward_falling(chunk, list(dict.fromkeys(mapping.values())))
        return mapping

    def _absorb(self, target: Entity, src: Entity) -> None:
        """Merge a chunk entity into a workspace entity: names, stamped roles, mentions."""
        known = {normalise_name(n) for n in (target.name, *target.aliases)}
        for n in (src.name, *src.aliases):
            if normalise_name(n) not in known:
                target.aliases.append(n)
                known.add(normalise_name(n))
                self._by_name.setdefault(normalise_name(n), target.id)
        target.roles.extend(src.roles)
        for c in src.chunks:
            if not target.chunks or target.chunks[-1] != c:
                target.chunks.append(c)

    def _couple(self, cnode: SpaceTimeNode, members: list[str], chunk_id: str) -> None:
        """Link members to one node of cnode's kind: merge their existing nodes, add the value.

        Entities point at their node, so the node's new value is at once the current value of
        every entity linked to it (propagation costs nothing per linked entity).
        """
        kind: Kind = cnode.kind
        members = list(dict.fromkeys(members))
        existing = list(dict.fromkeys(n for n in (getattr(self.ws.entities[m], kind) for m in members) if n))
        old = {n: self.ws.nodes[n].current for n in existing}
        if existing:
            existing.sort(key=lambda n: -len(self.ws.nodes[n].entities))  # union by size
            node = self.ws.nodes[existing[0]]
            for other in existing[1:]:
                self._merge_nodes(node, self.ws.nodes[other])
        else:
            node = SpaceTimeNode(id=self.ws.new_id("s" if kind == "space" else "t"), kind=kind)
            self.ws.nodes[node.id] = node
        for stamp in cnode.history:
            if node.current is None or normalise_name(node.current) != normalise_name(stamp.value):
                node.history.append(ValueStamp(value=stamp.value, chunk=chunk_id, via=list(members)))
        for m in members:
            ent = self.ws.entities[m]
            if getattr(ent, kind) != node.id:
                node.entities.append(m)
                setattr(ent, kind, node.id)
        member_set = set(members)
        others = len(node.entities) - len(member_set)
        if others > 0 and any(v != node.current for v in old.values()):
            # the first few reached entities are named; the list is never scanned in full
            reached = [e for e in node.entities[:len(member_set) + 20] if e not in member_set][:20]
            self.stats["propagations"] += 1
            self.ws.events.append({"event": f"{kind}_propagated", "chunk": chunk_id, "node": node.id,
                                   "value": node.current, "from": members, "to": reached, "linked": others})

    def _merge_nodes(self, keep: SpaceTimeNode, drop: SpaceTimeNode) -> None:
        """Two nodes of one kind become one: the dropped node's stamps are inserted in chunk
        order (a value repeated by the neighbouring stamp is folded in), its entities repoint."""
        pos = self.ws.chunk_pos
        hist = keep.history
        for s in drop.history:
            i = bisect.bisect_right(hist, pos(s.chunk), key=lambda x: pos(x.chunk))
            if i and normalise_name(hist[i - 1].value) == normalise_name(s.value):
                hist[i - 1].via = list(dict.fromkeys(hist[i - 1].via + s.via))
                continue
            hist.insert(i, s)
            if i + 1 < len(hist) and normalise_name(hist[i + 1].value) == normalise_name(s.value):
                s.via = list(dict.fromkeys(s.via + hist[i + 1].via))
                del hist[i + 1]
        for e in drop.entities:
            setattr(self.ws.entities[e], keep.kind, keep.id)
            keep.entities.append(e)
        keep.merged_from += [drop.id, *drop.merged_from]
        del self.ws.nodes[drop.id]
        self.stats["nodes_merged"] += 1
        self.ws.events.append({"event": "nodes_merged", "kind": keep.kind, "into": keep.id, "node": drop.id})

    # -- forward-falling questions -----------------------------------------------------------
    async def _forward_falling(self, chunk: ChunkRecord, seen: list[str]) -> None:
        """Offer the open questions of entities this chunk mentions again to the LLM."""
        picked: list[str] = []
        done: set[str] = set()
        for e in seen:
            for qid in reversed(self._open.get(e, ())):
                v, q = self._questions[qid]
                if qid in done or not q.is_open() or q.asked_in == chunk.id:
                    continue
                done.add(qid)
                picked.append(qid)
        picked = sorted(picked, key=lambda i: self.ws.chunk_pos(self._questions[i][1].asked_in))
        picked = picked[-self.ff_max_questions:]
        if not picked or not chunk.text.strip():
            return
        self.stats["ff_offered"] += len(picked)
        numbered = {str(i + 1): qid for i, qid in enumerate(picked)}
        listing = [(n, self._questions[qid][0].phrase, self._questions[qid][1].question) for n, qid in numbered.items()]
        try:
            out, _ = await self.llm.complete_json(forward_messages(chunk.text, listing), FFAnswers,
                                                  max_tokens=self.ff_max_tokens)
        except JsonOutputError as exc:
            self.stats["ff_failed"] += 1
            self.ws.events.append({"event": "forward_falling_failed", "chunk": chunk.id, "error": str(exc)[:300]})
            return
        for a in out.answers:
            qid = numbered.get(a.id.strip().rstrip("."))
            if qid is None or not (a.answer.strip() or a.entity_names):
                continue
            v, q = self._questions[qid]
            if not q.is_open():
                continue
            ids = [self._by_name[k] for k in (normalise_name(n) for n in a.entity_names) if k in self._by_name]
            q.answer_ids = list(dict.fromkeys(ids))
            q.answer_text = a.answer.strip() or ", ".join(a.entity_names)
            q.answered_in = chunk.id
            self.stats["ff_answered"] += 1
            self.ws.events.append({"event": "forward_falling_answered", "chunk": chunk.id, "question": qid,
                                   "verb": v.id, "answer": q.answer_text})


def _describe(e: Entity) -> str:
    roles = "; ".join(f"{r.role} ({', '.join(r.states)})" if r.states else r.role for r in e.roles[-6:])
    return f"{e.name}" + (f" (also {', '.join(e.aliases)})" if e.aliases else "") + (f": {roles}" if roles else "")
