"""The GSW workspace: a typed, JSON-serialisable semantic map of one chapter (or one book).

Entities keep their role/state history stamped with the chunk it came from; verb phrases keep
their valence questions (the open ones, and the Operator's predictive questions, are the
forward-falling questions); Space and Time nodes keep a value history and the entities linked to
them, so a value set through one entity is the current value of every entity on that node. An
entity sees a node's values only from the chunk it was linked on (`since`); what it had before
(on nodes since merged, or before it moved) stays in its own `past`. Pure data: loading a saved
workspace needs no model.
"""

from __future__ import annotations

import bisect
import re
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr

FORMAT = "gsw-workspace/2"
Kind = Literal["space", "time"]
_ARTICLES = {"the", "a", "an"}


def normalise_name(name: str) -> str:
    """Lower case, punctuation to spaces, leading article dropped: the exact-match key."""
    words = re.sub(r"[^0-9a-z]+", " ", name.lower()).split()
    if len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    return " ".join(words)


_NO_ANSWER = re.compile(
    r"^(?:none|null|nil|n ?a|unknown|unclear|unspecified|not (?:stated|mentioned|"
    r"specified|given|known|provided|available|applicable|clear|said|described|indicated|answered)"
    r"(?: in (?:the|this) (?:passage|text|chunk|story))?|no (?:answer|information|info|mention|data)"
    r"(?: given| provided)?|(?:the )?(?:passage|text|story) does not (?:say|state|mention|specify)"
    r"(?: it)?|cannot be determined|can ?not tell|tbd|to be determined|unanswered)$")


def is_unanswered(text: str | None) -> bool:
    """True for an empty answer and for the ways a model says "no answer" ("None", "not stated",
    "unknown", "N/A", ...). The one predicate for the Operator, the Reconciler and QA."""
    t = " ".join(re.sub(r"[^0-9a-z]+", " ", (text or "").lower()).split())
    return not t or bool(_NO_ANSWER.match(t))


class ValueStamp(BaseModel):
    value: str
    chunk: str
    via: list[str] = Field(default_factory=list)  # entities whose chunk set this value


class RoleEntry(BaseModel):
    role: str
    states: list[str] = Field(default_factory=list)
    chunk: str


class Entity(BaseModel):
    id: str
    name: str
    aliases: list[str] = Field(default_factory=list)
    roles: list[RoleEntry] = Field(default_factory=list)
    chunks: list[str] = Field(default_factory=list)  # chunks that mention it, in order
    space: str | None = None  # id of its Space node
    time: str | None = None  # id of its Time node
    since: dict[str, str] = Field(default_factory=dict)  # kind -> chunk it was linked to its node on
    past: dict[str, list[ValueStamp]] = Field(default_factory=dict)  # kind -> its values from before
    summaries: dict[str, str] = Field(default_factory=dict)  # chapter id -> index-time summary


class ValenceQuestion(BaseModel):
    id: str
    kind: str  # who, whom, what, where, when, how, why, other; "predictive" for what may come next
    question: str
    answer_ids: list[str] = Field(default_factory=list)
    answer_text: str = ""
    about_ids: list[str] = Field(default_factory=list)  # predictive: the entities it concerns
    asked_in: str
    answered_in: str | None = None  # the chunk whose text answered it (later = forward-falling)

    def is_open(self) -> bool:
        return not self.answer_ids and is_unanswered(self.answer_text)


class VerbPhrase(BaseModel):
    id: str
    phrase: str
    chunk: str
    questions: list[ValenceQuestion] = Field(default_factory=list)

    def participants(self) -> list[str]:
        return list(dict.fromkeys(e for q in self.questions for e in (*q.about_ids, *q.answer_ids)))

    def predictive(self) -> bool:
        return bool(self.questions) and all(q.kind == "predictive" for q in self.questions)


class SpaceTimeNode(BaseModel):
    id: str
    kind: Kind
    history: list[ValueStamp] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    merged_from: list[str] = Field(default_factory=list)

    @property
    def current(self) -> str | None:
        return self.history[-1].value if self.history else None


class ChunkRecord(BaseModel):
    id: str  # "<chapter>.<index>"
    chapter: str
    index: int
    text: str
    context: str = ""
    status: Literal["ok", "operator_failed", "spacetime_failed"] = "ok"
    error: str | None = None
    operator: dict[str, Any] | None = None  # the Operator's validated reply, before the guard (chunk-local ids)
    space_time: dict[str, Any] | None = None
    id_map: dict[str, str] = Field(default_factory=dict)  # chunk-local id -> workspace entity id
    guard: dict[str, int] = Field(default_factory=dict)  # what the output guard dropped (guard.py)


class Workspace(BaseModel):
    format: str = FORMAT
    scope: str  # a chapter id, or "global"
    chapters: list[str] = Field(default_factory=list)
    chunks: list[ChunkRecord] = Field(default_factory=list)
    entities: dict[str, Entity] = Field(default_factory=dict)
    verbs: dict[str, VerbPhrase] = Field(default_factory=dict)
    nodes: dict[str, SpaceTimeNode] = Field(default_factory=dict)
    events: list[dict[str, Any]] = Field(default_factory=list)  # the Reconciler's log
    counters: dict[str, int] = Field(default_factory=dict)
    meta: dict[str, Any] = Field(default_factory=dict)
    _pos: dict[str, int] = PrivateAttr(default_factory=dict)

    def new_id(self, prefix: str) -> str:
        n = self.counters.get(prefix, 0) + 1
        self.counters[prefix] = n
        return f"{prefix}{n}"

    def add_chunk(self, chunk: ChunkRecord) -> None:
        self._pos[chunk.id] = len(self.chunks)
        self.chunks.append(chunk)

    def chunk_pos(self, chunk_id: str) -> int:
        if len(self._pos) != len(self.chunks):
            self._pos = {c.id: i for i, c in enumerate(self.chunks)}
        return self._pos.get(chunk_id, -1)

    def chunk_chapter(self, chunk_id: str) -> str:
        return chunk_id.rsplit(".", 1)[0]

    def node_of(self, entity_id: str, kind: Kind) -> SpaceTimeNode | None:
        nid = getattr(self.entities[entity_id], kind)
        return self.nodes.get(nid) if nid else None

    def stamps(self, entity_id: str, kind: Kind) -> list[ValueStamp]:
        """The entity's own history of one kind: its past, then its node's values since it joined."""
        e = self.entities[entity_id]
        node = self.node_of(entity_id, kind)
        tail = node.history[self.since_index(node, e.since.get(kind)):] if node else []
        return [*e.past.get(kind, []), *tail]

    def since_index(self, node: SpaceTimeNode, since: str | None) -> int:
        """Index of the first stamp of `node` at or after chunk `since` (histories are in chunk order)."""
        if since is None:
            return 0
        return bisect.bisect_left(node.history, self.chunk_pos(since), key=lambda s: self.chunk_pos(s.chunk))

    def current(self, entity_id: str, kind: Kind) -> str | None:
        node = self.node_of(entity_id, kind)
        e = self.entities[entity_id]
        if node and node.history and self.since_index(node, e.since.get(kind)) < len(node.history):
            return node.current
        past = e.past.get(kind)
        return past[-1].value if past else None

    def find(self, name: str) -> Entity | None:
        """The entity with this (normalised) name or alias; a linear scan, for people and tests."""
        key = normalise_name(name)
        for e in self.entities.values():
            if key in {normalise_name(n) for n in [e.name, *e.aliases]}:
                return e
        return None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Workspace:
        if data.get("format") != FORMAT:
            raise ValueError(f"not a GSW workspace file (format {data.get('format')!r}, expected {FORMAT})")
        return cls.model_validate(data)


def verbs_by_entity(ws: Workspace) -> dict[str, list[str]]:
    """entity id -> ids of the verb phrases it takes part in (answers or is asked about), in order."""
    out: dict[str, list[str]] = {}
    for v in ws.verbs.values():
        for e in v.participants():
            out.setdefault(e, []).append(v.id)
    return out


def verb_line(ws: Workspace, v: VerbPhrase, chapter: str | None = None) -> str:
    """'repaired the lamp (who: Ida Wren; where: North Pier)'; a predictive question reads
    'expects: When will the lamp be tested? -> at dawn (answered in 4.2)'."""
    parts = []
    for q in v.questions:
        late = f" (answered in {q.answered_in})" if q.answered_in and q.answered_in != q.asked_in else ""
        names = [ws.entities[e].name for e in q.answer_ids if e in ws.entities]
        ans = ", ".join(names) or q.answer_text
        if q.kind == "predictive":
            parts.append(f"expects: {q.question}" + ("" if q.is_open() else f" -> {ans}{late}"))
        elif not q.is_open():
            parts.append(f"{q.kind}: {ans}" + (f", answered in {q.answered_in}" if late else ""))
    if v.predictive():
        return "; ".join(parts)
    return f"{v.phrase} ({'; '.join(parts)})" if parts else v.phrase


class FactIndex:
    """Each entity's stamped facts grouped by chapter, so that the facts of every (chapter,
    entity) entry of a book-wide workspace cost about their own size: roles and actions are
    bucketed once per entity, and a node's values for one chapter are found by bisection."""

    def __init__(self, ws: Workspace, space_time: bool = True, vbe: dict[str, list[str]] | None = None):
        self.ws = ws
        self.space_time = space_time
        self.vbe = vbe if vbe is not None else verbs_by_entity(ws)
        self._spans: dict[str, tuple[int, int]] | None = None
        self._rows: dict[str, dict[str | None, list[tuple[int, int, str]]]] = {}
        self._pos: dict[str, list[int]] = {}

    def spans(self) -> dict[str, tuple[int, int]]:
        """chapter -> (first, last) chunk position."""
        if self._spans is None:
            spans: dict[str, tuple[int, int]] = {}
            for i, c in enumerate(self.ws.chunks):
                lo, _ = spans.get(c.chapter, (i, i))
                spans[c.chapter] = (lo, i)
            self._spans = spans
        return self._spans

    def _positions(self, node: SpaceTimeNode) -> list[int]:
        """Chunk positions of a node's stamps (in order), computed once per node."""
        if node.id not in self._pos:
            self._pos[node.id] = [self.ws.chunk_pos(s.chunk) for s in node.history]
        return self._pos[node.id]

    def _own_rows(self, eid: str) -> dict[str | None, list[tuple[int, int, str]]]:
        """Roles, actions and past values of one entity, bucketed by chapter (one pass, cached)."""
        if eid in self._rows:
            return self._rows[eid]
        ws, e = self.ws, self.ws.entities[eid]
        out: dict[str | None, list[tuple[int, int, str]]] = {}

        def put(chunk: str, order: int, text: str) -> None:
            out.setdefault(ws.chunk_chapter(chunk), []).append((ws.chunk_pos(chunk), order, text))

        for r in e.roles:
            states = f"; states: {', '.join(r.states)}" if r.states else ""
            put(r.chunk, 0, f"[{r.chunk}] role: {r.role}{states}")
        for vid in self.vbe.get(eid, []):
            v = ws.verbs[vid]
            label = "open question" if v.predictive() else "action"
            put(v.chunk, 1, f"[{v.chunk}] {label}: {verb_line(ws, v)}")
        if self.space_time:
            for kind, label in (("space", "place"), ("time", "time")):
                for s in e.past.get(kind, []):
                    put(s.chunk, 2, _stamp_line(eid, s, label))
        self._rows[eid] = out
        return out

    def facts(self, eid: str, chapter: str | None = None) -> list[str]:
        """Everything the workspace holds about one entity (in one chapter), in chunk order."""
        ws = self.ws
        own = self._own_rows(eid)
        rows = [r for rows in own.values() for r in rows] if chapter is None else list(own.get(chapter, []))
        if self.space_time:
            for kind, label in (("space", "place"), ("time", "time")):
                node = ws.node_of(eid, kind)  # type: ignore[arg-type]
                if node is None:
                    continue
                positions = self._positions(node)
                since = ws.entities[eid].since.get(kind)
                lo = bisect.bisect_left(positions, ws.chunk_pos(since)) if since else 0
                hi = len(positions)
                if chapter is not None:
                    first, last = self.spans().get(chapter, (0, -1))
                    lo = max(lo, bisect.bisect_left(positions, first))
                    hi = bisect.bisect_right(positions, last)
                for s in node.history[lo:hi]:
                    rows.append((ws.chunk_pos(s.chunk), 2, _stamp_line(eid, s, label)))
        rows.sort(key=lambda t: (t[0], t[1]))
        return [text for _, _, text in rows]


def _stamp_line(eid: str, s: ValueStamp, label: str) -> str:
    via = "" if eid in s.via else " (shared with linked entities)"
    return f"[{s.chunk}] {label}: {s.value}{via}"


def entity_facts(ws: Workspace, entity_id: str, chapter: str | None = None, space_time: bool = True,
                 vbe: dict[str, list[str]] | None = None) -> list[str]:
    """Everything the workspace holds about one entity, as stamped lines in chunk order (one-off
    use; build one FactIndex for many entities)."""
    return FactIndex(ws, space_time, vbe).facts(entity_id, chapter)


def render_entity(ws: Workspace, entity_id: str, chapter: str | None = None, index: FactIndex | None = None) -> str:
    """What GSW believes about one entity, readable: names, history, current place and time."""
    e = ws.entities[entity_id]
    head = f"{e.name} [{e.id}]" + (f" (also: {', '.join(e.aliases)})" if e.aliases else "")
    lines = [head, f"  mentioned in chunks: {', '.join(e.chunks)}"]
    for kind in ("space", "time"):
        node = ws.node_of(entity_id, kind)  # type: ignore[arg-type]
        hist = " -> ".join(f"{s.value}@{s.chunk}" for s in ws.stamps(entity_id, kind))  # type: ignore[arg-type]
        if node or hist:
            linked = f"node {node.id} (linked: {len(node.entities)})" if node else "no node"
            lines.append(f"  {kind} {linked}: now {ws.current(entity_id, kind)}; history {hist}")  # type: ignore[arg-type]
    lines += [f"  {f}" for f in (index or FactIndex(ws)).facts(entity_id, chapter)]
    for ch, s in e.summaries.items():
        lines.append(f"  summary [{ch}]: {s}")
    return "\n".join(lines)


def render_text(ws: Workspace) -> str:
    """The whole workspace as text: chunks and their status, entities, open questions."""
    failed = [c for c in ws.chunks if c.status != "ok"]
    lines = [f"GSW workspace {ws.scope}: {len(ws.chunks)} chunks ({len(failed)} with failures), "
             f"{len(ws.entities)} entities, {len(ws.verbs)} verb phrases, {len(ws.nodes)} space/time nodes"]
    for c in failed:
        lines.append(f"  chunk {c.id}: {c.status}: {c.error}")
    lines.append("")
    index = FactIndex(ws)
    for eid in ws.entities:
        lines += [render_entity(ws, eid, index=index), ""]
    open_q = [(v, q) for v in ws.verbs.values() for q in v.questions if q.is_open()]
    if open_q:
        lines.append("Open (forward-falling) questions:")
        lines += [f"  [{q.asked_in}] {v.phrase}: {q.question}" for v, q in open_q]
    return "\n".join(lines)
