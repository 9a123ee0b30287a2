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

from collections import deque
from typing import Any

import numpy as np

from memeval.model_access.errors import JsonOutputError

from .frame import speaker_lines
from .guard import guard_links, guard_operator
from .kinds import KINDS_VERSION, check_kinds
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
    is_unanswered,
    normalise_name,
)


def chunk_workspace(chunk: ChunkRecord, op: OperatorOutput | None, st: SpaceTimeOutput | None,
                    persons: set[str] | None = None, framed: bool = False) -> Workspace:
    """One chunk's Operator (and space-time) output as a small workspace with chunk-local ids.

    The output guard runs here (on the replies as saved), so a re-reconciliation of saved
    replies drops and counts exactly the same things; so do the kind checks (kinds.py) when
    `persons` (the normalised names of the people known so far: Reconciler.persons) is given,
    with speaker attribution when the chunk is `framed` (frame.py). Each space-time link becomes
    one node (value or null) listing every entity of its group, in reply order; the Reconciler
    decides what an entity in two groups of one kind means.
    """
    ws = Workspace(scope=chunk.id, chapters=[chunk.chapter])
    ws.add_chunk(chunk)
    if op is None:
        return ws
    chunk.operator = chunk.operator or op.model_dump(mode="json")
    if st is not None:
        chunk.space_time = chunk.space_time or st.model_dump(mode="json")
    op, counts = guard_operator(op, chunk.text)
    if st is not None:
        st, more = guard_links(st, chunk.text)
        counts.update(more)
    if persons is not None:
        op, st, more = check_kinds(op, st, chunk.text, persons, speaker_lines(chunk.text) if framed else [])
        counts.update(more)
        counts["kinds_checked"] = KINDS_VERSION  # marks the chunk as checked, and how (counters.kind_validation)
    chunk.guard = dict(counts)
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
        qs = []
        for q in v.questions:
            ids = [local[a] for a in q.answer_entity_ids if a in local]
            text = "" if is_unanswered(q.answer_text) else q.answer_text.strip()
            qs.append(ValenceQuestion(id=ws.new_id("q"), kind=q.kind, question=q.question, answer_ids=ids,
                                      answer_text=text, asked_in=chunk.id,
                                      answered_in=chunk.id if (ids or text) else None))
        ws.verbs[vid] = VerbPhrase(id=vid, phrase=v.phrase, chunk=chunk.id, questions=qs)
    for f in op.forward_questions:
        about = list(dict.fromkeys(local[i] for i in f.entity_ids if i in local))
        if not f.question.strip() or not about:
            continue
        vid = ws.new_id("v")
        ws.verbs[vid] = VerbPhrase(id=vid, phrase="(what may come next)", chunk=chunk.id, questions=[
            ValenceQuestion(id=ws.new_id("q"), kind="predictive", question=f.question.strip(), about_ids=about,
                            asked_in=chunk.id)])
    for link in st.links if st else []:
        members = list(dict.fromkeys(local[i] for i in link.entity_ids if i in local))
        if not members:
            continue
        value = None if is_unanswered(link.value) else (link.value or "").strip()
        nid = ws.new_id("s" if link.kind == "space" else "t")
        ws.nodes[nid] = SpaceTimeNode(id=nid, kind=link.kind, entities=members, history=[
            ValueStamp(value=value, chunk=chunk.id, via=members)] if value else [])
    chunk.id_map = dict(local)
    return ws


class Reconciler:
    """Holds one workspace and the indexes over it; `add` merges the next chunk workspace."""

    def __init__(self, ws: Workspace, *, resolution: str = "exact", llm: Any = None, embedder: Any = None,
                 er_candidates: int = 3, er_threshold: float = 0.8, forward_falling: bool = True,
                 ff_max_questions: int = 12, ff_window: int = 50, ff_max_tokens: int = 500,
                 space_time: bool = True, space_time_join: str = "inherit", validate_kinds: bool = True):
        if resolution not in {"exact", "embedding_llm"}:
            raise ValueError("entity_resolution must be 'exact' or 'embedding_llm'")
        if space_time_join not in {"inherit", "since"}:
            raise ValueError(f"space_time_join must be 'inherit' or 'since', not {space_time_join!r}")
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
        self.inherit = space_time_join == "inherit"
        self.validate_kinds = validate_kinds
        self.stats: dict[str, int] = {k: 0 for k in (
            "chunks_merged", "entities_created", "entities_merged", "nodes_merged", "propagations",
            "ff_offered", "ff_answered", "ff_failed", "er_checks", "er_merged")}
        if self.inherit:
            self.stats["inherited"] = 0
        self._by_name: dict[str, str] = {}
        self.persons: set[str] = set()  # normalised names of speakers and who/whom answers (kinds.py)
        self._touched: list[str] = []  # entities a value reached through their node in this chunk
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
        self._touched = []
        if self.space_time:
            for kind in ("space", "time"):
                groups = [(n.history[0].value if n.history else None,
                           list(dict.fromkeys(mapping[e] for e in n.entities)))
                          for n in cw.nodes.values() if n.kind == kind]
                if groups:
                    self._couple_chunk(kind, groups, chunk.id)  # type: ignore[arg-type]
        for v in cw.verbs.values():
            nv = VerbPhrase(id=self.ws.new_id("v"), phrase=v.phrase, chunk=v.chunk, questions=[
                q.model_copy(update={"id": self.ws.new_id("q"), "answer_ids": [mapping[a] for a in q.answer_ids],
                                     "about_ids": [mapping[a] for a in q.about_ids]})
                for q in v.questions])
            self.ws.verbs[nv.id] = nv
            self._index_verb(nv)
        chunk.id_map = {loc: mapping[mid] for loc, mid in chunk.id_map.items() if mid in mapping}
        if self.validate_kinds:
            self._note_persons(cw, chunk)
        if self.forward_falling:
            await self._forward_falling(chunk, list(dict.fromkeys([*mapping.values(), *self._touched])))
        return mapping

    def _note_persons(self, cw: Workspace, chunk: ChunkRecord) -> None:
        """Remember who is a person: the chunk's speakers and its who/whom answers."""
        self.persons |= {normalise_name(s) for s, _ in speaker_lines(chunk.text)}
        for v in cw.verbs.values():
            for q in v.questions:
                if q.kind in ("who", "whom"):
                    self.persons |= {normalise_name(cw.entities[a].name) for a in q.answer_ids if a in cw.entities}

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

    def _couple_chunk(self, kind: Kind, groups: list[tuple[str | None, list[str]]], chunk_id: str) -> None:
        """Couple one chunk's groups of one kind, in reply order.

        An entity in two groups of one kind in this chunk has moved on within it: it leaves its
        node first (its values so far go to its own past), takes the earlier groups' values into
        its past only, and is linked by its last group; the other members of an earlier group
        are not dragged along to the later place. Likewise an entity whose node an earlier group
        of this chunk already placed elsewhere leaves that node before its own group links it.
        """
        last: dict[str, int] = {}
        seen: set[str] = set()
        movers: set[str] = set()
        for i, (_, members) in enumerate(groups):
            for m in members:
                if m in seen:
                    movers.add(m)
                seen.add(m)
                last[m] = i
        for m in movers:
            self._detach(m, kind)
        claimed: dict[str, str] = {}  # node id -> the value an earlier group of this chunk gave it
        for i, (value, members) in enumerate(groups):
            linked = [m for m in members if last[m] == i]
            if value:
                for m in members:
                    if last[m] != i:
                        self.ws.entities[m].past.setdefault(kind, []).append(
                            ValueStamp(value=value, chunk=chunk_id, via=list(members)))
            for m in linked:  # on a node an earlier group put elsewhere in this chunk: leave it
                nid = getattr(self.ws.entities[m], kind)
                if nid in claimed and normalise_name(claimed[nid]) != normalise_name(value or ""):
                    self._detach(m, kind)
            if linked:
                self._couple(kind, value, linked, chunk_id)
                claimed[getattr(self.ws.entities[linked[0]], kind)] = value or ""

    def _detach(self, eid: str, kind: Kind) -> None:
        """The entity leaves its node; the values it saw there become its own past."""
        e = self.ws.entities[eid]
        node = self.ws.node_of(eid, kind)
        if node is None:
            return
        e.past.setdefault(kind, []).extend(node.history[self.ws.since_index(node, e.since.get(kind)):])
        node.entities.remove(eid)
        setattr(e, kind, None)
        e.since.pop(kind, None)
        if not node.entities:
            del self.ws.nodes[node.id]

    def _couple(self, kind: Kind, value: str | None, members: list[str], chunk_id: str) -> None:
        """Link members to one node of this kind (merging their nodes) and add the value, if any.

        Entities point at their node, so the node's new value is at once the current value of
        every entity linked to it (propagation costs nothing per linked entity). An entity sees
        the node's values from the chunk it joined on; under `space_time_join: inherit` (the
        paper's Carter Stewart case: a presenter met in a hall whose place and date were given
        before he appears) an entity that had no value of this kind and joins through a group
        that names none also takes the value bound to the node when it joins (`since` is then
        that value's chunk). Under `since` values recorded before belong only to the entities
        that were there.
        """
        existing = list(dict.fromkeys(n for n in (getattr(self.ws.entities[m], kind) for m in members) if n))
        if self.inherit:  # a node with a bound value is kept, so that the value is there to inherit
            existing.sort(key=lambda n: (not self.ws.nodes[n].history, -len(self.ws.nodes[n].entities)))
        else:
            existing.sort(key=lambda n: -len(self.ws.nodes[n].entities))  # union by size
        bare: list[str] = []  # who may inherit: the members and the merged nodes' entities without a value
        if self.inherit and not value:
            joining = dict.fromkeys([*members, *(e for n in existing[1:] for e in self.ws.nodes[n].entities)])
            bare = [e for e in joining if self.ws.current(e, kind) is None]
        if existing:
            node = self.ws.nodes[existing[0]]
            for other in existing[1:]:
                self._merge_nodes(node, self.ws.nodes[other], chunk_id)
        else:
            node = SpaceTimeNode(id=self.ws.new_id("s" if kind == "space" else "t"), kind=kind)
            self.ws.nodes[node.id] = node
        for m in members:
            ent = self.ws.entities[m]
            if getattr(ent, kind) != node.id:
                node.entities.append(m)
                setattr(ent, kind, node.id)
                ent.since[kind] = chunk_id
        joined = any(self.ws.entities[m].since.get(kind) == chunk_id for m in members)
        if not value:
            self._inherit(kind, node, bare, chunk_id)
            return
        same = node.current is not None and normalise_name(node.current) == normalise_name(value)
        if same and node.history[-1].chunk == chunk_id:
            node.history[-1].via = list(dict.fromkeys([*node.history[-1].via, *members]))
            return
        if same and not joined:
            return
        node.history.append(ValueStamp(value=value, chunk=chunk_id, via=list(members)))
        member_set = set(members)
        others = len(node.entities) - len(member_set)
        if others > 0:
            # the first few reached entities are named; the list is never scanned in full
            reached = [e for e in node.entities[:len(member_set) + 20] if e not in member_set][:20]
            self._touched += reached
            self.stats["propagations"] += 1
            self.ws.events.append({"event": f"{kind}_propagated", "chunk": chunk_id, "node": node.id,
                                   "value": value, "from": members, "to": reached, "linked": others})

    def _inherit(self, kind: Kind, node: SpaceTimeNode, bare: list[str], chunk_id: str) -> None:
        """Entities without a value of this kind that joined `node` on this chunk take its bound
        value: they see the node from that value's chunk on."""
        if not node.history:
            return
        stamp = node.history[-1]
        heirs = [e for e in bare if getattr(self.ws.entities[e], kind) == node.id
                 and self.ws.entities[e].since.get(kind) == chunk_id]
        for e in heirs:
            self.ws.entities[e].since[kind] = stamp.chunk
        if heirs:
            self.stats["inherited"] += len(heirs)
            self.ws.events.append({"event": f"{kind}_inherited", "chunk": chunk_id, "node": node.id,
                                   "value": stamp.value, "from": stamp.chunk, "to": heirs[:20]})

    def _merge_nodes(self, keep: SpaceTimeNode, drop: SpaceTimeNode, chunk_id: str) -> None:
        """Two nodes of one kind become one from this chunk on. The dropped node's entities keep
        the values they saw there as their own past and see `keep`'s values from this chunk on;
        `keep`'s earlier values are not copied into their history (nor theirs into its)."""
        for e in drop.entities:
            ent = self.ws.entities[e]
            ent.past.setdefault(keep.kind, []).extend(drop.history[self.ws.since_index(drop, ent.since.get(keep.kind)):])
            setattr(ent, keep.kind, keep.id)
            ent.since[keep.kind] = chunk_id
            keep.entities.append(e)
        keep.merged_from += [drop.id, *drop.merged_from]
        del self.ws.nodes[drop.id]
        self.stats["nodes_merged"] += 1
        self.ws.events.append({"event": "nodes_merged", "kind": keep.kind, "into": keep.id, "node": drop.id,
                               "chunk": chunk_id})

    # -- forward-falling questions -----------------------------------------------------------
    def _known(self, entity_ids: list[str], limit: int = 12) -> list[str]:
        """What the reconciled workspace holds about these entities: recent roles, and their
        current place and time (which may have reached them through a linked entity)."""
        lines = []
        for eid in entity_ids[:limit]:
            e = self.ws.entities[eid]
            parts = []
            roles = list(dict.fromkeys(r.role for r in e.roles[-3:]))
            if roles:
                parts.append("roles: " + ", ".join(roles))
            for kind, label in (("space", "place"), ("time", "time")):
                now = self.ws.current(eid, kind)  # type: ignore[arg-type]
                if now:
                    parts.append(f"{label} now: {now}")
            if parts:
                lines.append(f"{e.name}: " + "; ".join(parts))
        return lines

    async def _forward_falling(self, chunk: ChunkRecord, seen: list[str]) -> None:
        """Offer the open questions of the entities this chunk mentions (or that a value reached
        through their node) to the LLM, with the new chunk and what the workspace holds."""
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
        involved = list(dict.fromkeys(e for qid in picked for e in self._questions[qid][0].participants()))
        known = self._known(list(dict.fromkeys([*involved, *seen])))
        try:
            out, _ = await self.llm.complete_json(forward_messages(chunk.text, listing, known), FFAnswers,
                                                  max_tokens=self.ff_max_tokens)
        except JsonOutputError as exc:
            self.stats["ff_failed"] += 1
            self.ws.events.append({"event": "forward_falling_failed", "chunk": chunk.id, "error": str(exc)[:300]})
            return
        for a in out.answers:
            qid = numbered.get(a.id.strip().rstrip("."))
            names = [n for n in a.entity_names if not is_unanswered(n)]
            text = "" if is_unanswered(a.answer) else a.answer.strip()
            if qid is None or not (text or names):
                continue
            v, q = self._questions[qid]
            if not q.is_open():
                continue
            ids = [self._by_name[k] for k in (normalise_name(n) for n in names) if k in self._by_name]
            q.answer_ids = list(dict.fromkeys(ids))
            q.answer_text = text or ", ".join(names)
            q.answered_in = chunk.id
            self.stats["ff_answered"] += 1
            self.ws.events.append({"event": "forward_falling_answered", "chunk": chunk.id, "question": qid,
                                   "verb": v.id, "answer": q.answer_text})


def _describe(e: Entity) -> str:
    roles = "; ".join(f"{r.role} ({', '.join(r.states)})" if r.states else r.role for r in e.roles[-6:])
    return f"{e.name}" + (f" (also {', '.join(e.aliases)})" if e.aliases else "") + (f": {roles}" if roles else "")
