"""The GSW workspace: a typed, JSON-serialisable semantic map of one chapter (or one book).

Entities keep their role/state history stamped with the chunk it came from; verb phrases keep
their valence questions (the open ones are the forward-falling questions); Space and Time nodes
keep a value history and the entities linked to them, so a value set through one entity is the
current value of every entity on that node. Pure data: loading a saved workspace needs no model.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr

FORMAT = "gsw-workspace/1"
Kind = Literal["space", "time"]
_ARTICLES = {"the", "a", "an"}


def normalise_name(name: str) -> str:
    """Lower case, punctuation to spaces, leading article dropped: the exact-match key."""
    words = re.sub(r"[^0-9a-z]+", " ", name.lower()).split()
    if len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    return " ".join(words)


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
    summaries: dict[str, str] = Field(default_factory=dict)  # chapter id -> index-time summary


class ValenceQuestion(BaseModel):
    id: str
    kind: str
    question: str
    answer_ids: list[str] = Field(default_factory=list)
    answer_text: str = ""
    asked_in: str
    answered_in: str | None = None  # the chunk whose text answered it (later = forward-falling)

    def is_open(self) -> bool:
        return not self.answer_ids and not self.answer_text.strip()


class VerbPhrase(BaseModel):
    id: str
    phrase: str
    chunk: str
    questions: list[ValenceQuestion] = Field(default_factory=list)

    def participants(self) -> list[str]:
        return list(dict.fromkeys(e for q in self.questions for e in q.answer_ids))


class ValueStamp(BaseModel):
    value: str
    chunk: str
    via: list[str] = Field(default_factory=list)  # entities whose chunk set this value


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
    operator: dict[str, Any] | None = None  # the Operator's validated output (chunk-local ids)
    space_time: dict[str, Any] | None = None
    id_map: dict[str, str] = Field(default_factory=dict)  # chunk-local id -> workspace entity id


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

    def current(self, entity_id: str, kind: Kind) -> str | None:
        node = self.node_of(entity_id, kind)
        return node.current if node else None

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
    """entity id -> ids of the verb phrases it answers a valence question of, in order."""
    out: dict[str, list[str]] = {}
    for v in ws.verbs.values():
        for e in v.participants():
            out.setdefault(e, []).append(v.id)
    return out


def _in_chapter(chunk: str, chapter: str | None) -> bool:
    return chapter is None or chunk.rsplit(".", 1)[0] == chapter


def verb_line(ws: Workspace, v: VerbPhrase, chapter: str | None = None) -> str:
    """'demonstrated cat leaps (who: Ezra Edwards; where: Bethpage Black Course)'."""
    parts = []
    for q in v.questions:
        if q.is_open():
            continue
        names = [ws.entities[e].name for e in q.answer_ids if e in ws.entities]
        ans = ", ".join(names) or q.answer_text
        late = f", answered in {q.answered_in}" if q.answered_in and q.answered_in != q.asked_in else ""
        parts.append(f"{q.kind}: {ans}{late}")
    return f"{v.phrase} ({'; '.join(parts)})" if parts else v.phrase


def entity_facts(ws: Workspace, entity_id: str, chapter: str | None = None, space_time: bool = True,
                 vbe: dict[str, list[str]] | None = None) -> list[str]:
    """Everything the workspace holds about one entity, as stamped lines in chunk order."""
    e = ws.entities[entity_id]
    rows: list[tuple[int, int, str]] = []
    for r in e.roles:
        if _in_chapter(r.chunk, chapter):
            states = f"; states: {', '.join(r.states)}" if r.states else ""
            rows.append((ws.chunk_pos(r.chunk), 0, f"[{r.chunk}] role: {r.role}{states}"))
    vbe = vbe if vbe is not None else verbs_by_entity(ws)
    for vid in vbe.get(entity_id, []):
        v = ws.verbs[vid]
        if _in_chapter(v.chunk, chapter):
            rows.append((ws.chunk_pos(v.chunk), 1, f"[{v.chunk}] action: {verb_line(ws, v)}"))
    if space_time:
        for kind, label in (("space", "place"), ("time", "time")):
            node = ws.node_of(entity_id, kind)  # type: ignore[arg-type]
            for s in node.history if node else []:
                if _in_chapter(s.chunk, chapter):
                    via = "" if entity_id in s.via else " (shared with linked entities)"
                    rows.append((ws.chunk_pos(s.chunk), 2, f"[{s.chunk}] {label}: {s.value}{via}"))
    rows.sort(key=lambda t: (t[0], t[1]))
    return [text for _, _, text in rows]


def render_entity(ws: Workspace, entity_id: str, chapter: str | None = None) -> str:
    """What GSW believes about one entity, readable: names, history, current place and time."""
    e = ws.entities[entity_id]
    head = f"{e.name} [{e.id}]" + (f" (also: {', '.join(e.aliases)})" if e.aliases else "")
    lines = [head, f"  mentioned in chunks: {', '.join(e.chunks)}"]
    for kind in ("space", "time"):
        node = ws.node_of(entity_id, kind)  # type: ignore[arg-type]
        if node:
            hist = " -> ".join(f"{s.value}@{s.chunk}" for s in node.history)
            lines.append(f"  {kind} node {node.id} (linked: {len(node.entities)}): now {node.current}; history {hist}")
    lines += [f"  {f}" for f in entity_facts(ws, entity_id, chapter)]
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
    for eid in ws.entities:
        lines += [render_entity(ws, eid), ""]
    open_q = [(v, q) for v in ws.verbs.values() for q in v.questions if q.is_open()]
    if open_q:
        lines.append("Open (forward-falling) questions:")
        lines += [f"  [{q.asked_in}] {v.phrase}: {q.question}" for v, q in open_q]
    return "\n".join(lines)
