"""Passages and Episodic Event Frames: one extraction call per passage.

A passage is a unit (chapter or session) or, with `window_turns`, a window of a session's turns
(paragraphs). Each passage gets one frame call (summary + events with participants, action,
absolute and raw time, location, reason, method) and, when the graph layer is on, one facts
call (quadruples). Two calls with small schemas rather than one combined call: a 0.5B-1.5B
model under a JSON grammar fills a small schema far more reliably than a nested one, and the
`seem_no_graph` ablation then simply skips the facts call. Frames carry provenance pointers
(passage ids); the code adds them, never the model.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from datasets.types import Corpus
from model_access.errors import JsonOutputError

from ..embedding_rag import paragraphs
from .guard import guard_facts, guard_frame
from .prompts import facts_messages, frame_messages
from .schemas import FactsOutput, FrameOutput


@dataclass(frozen=True)
class Passage:
    id: str            # the unit id, or "<unit id>#w<k>" for the k-th window of a unit
    unit_id: str
    order: int         # position in the corpus, windows in order
    date: str | None
    text: str
    label: str = ""    # "turns 9-16" for a window

    @property
    def key(self) -> str:
        """Content address of (date, text): the extraction saw this date."""
        return hashlib.sha256(f"{self.date or ''}\x00{self.text}".encode()).hexdigest()[:20]

    @property
    def text_key(self) -> str:
        """Content address of the text alone: one session repeated in many haystacks under
        different dates (LongMemEval-S) shares one date-free extraction."""
        return "t" + hashlib.sha256(self.text.encode()).hexdigest()[:19]


def split_passages(corpus: Corpus, window_turns: int | None = None,
                   max_passages: int | None = None) -> list[Passage]:
    """Passages in corpus order; a unit longer than `window_turns` paragraphs is windowed."""
    if window_turns is not None and window_turns < 1:
        raise ValueError("seem window_turns must be null or >= 1")
    out: list[Passage] = []
    for u in sorted(corpus.units, key=lambda x: x.position):
        paras = paragraphs(u.text) if window_turns else []
        if not window_turns or len(paras) <= window_turns:
            out.append(Passage(u.id, u.id, len(out), u.timestamp, u.text))
            continue
        for k, start in enumerate(range(0, len(paras), window_turns)):
            chunk = paras[start:start + window_turns]
            out.append(Passage(f"{u.id}#w{k + 1}", u.id, len(out), u.timestamp, "\n\n".join(chunk),
                               f"turns {start + 1}-{start + len(chunk)}"))
    return out[:max_passages] if max_passages else out


@dataclass
class Frame:
    """A memory unit: a summary and events, anchored to the passages it came from."""

    id: str
    summary: str
    events: list[dict[str, Any]]
    provenance: list[str]                      # passage ids, in corpus order
    merged_from: list[str] = field(default_factory=list)

    def body(self) -> dict[str, Any]:
        return {"summary": self.summary, "events": self.events}

    def text(self) -> str:
        """The frame as one text (embedded, BM25-indexed, shown to the judge and the reader)."""
        lines = [self.summary]
        for e in self.events:
            lines.append("- " + event_line(e))
        return "\n".join(x for x in lines if x)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "summary": self.summary, "events": self.events,
                "provenance": self.provenance, "merged_from": self.merged_from}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Frame:
        return cls(d["id"], d["summary"], d["events"], list(d["provenance"]), list(d.get("merged_from", [])))


def event_line(e: dict[str, Any]) -> str:
    """participants; action; time (raw); at location; because reason; by method."""
    parts = [", ".join(e.get("participants") or []), e.get("action", "")]
    when = e.get("time", "")
    if e.get("time_raw") and e.get("time_raw") != when:
        when = f"{when} ({e['time_raw']})" if when else e["time_raw"]
    parts.append(when)
    if e.get("location"):
        parts.append("at " + e["location"])
    if e.get("reason"):
        parts.append("because " + e["reason"])
    if e.get("method"):
        parts.append("by " + e["method"])
    return "; ".join(p for p in parts if p)


async def extract_passage(llm: Any, p: Passage, *, graph: bool, frame_max_tokens: int,
                          facts_max_tokens: int, with_date: bool = True) -> dict[str, Any]:
    """The frame (and facts) of one passage; a call whose JSON stays invalid is recorded, not fatal.
    Without the date, times stay as written (the context still shows each passage's date)."""
    date = p.date if with_date else None
    rec: dict[str, Any] = {"key": p.key if with_date else p.text_key, "frame": None, "frame_status": "ok",
                           "facts": [], "facts_status": "off", "guard": {}}
    guard: Counter[str] = Counter()
    try:
        out, _ = await llm.complete_json(frame_messages(p.text, date), FrameOutput, max_tokens=frame_max_tokens)
        rec["frame"], dropped = guard_frame(out.model_dump(mode="json"), p.text)
        guard.update(dropped)
    except JsonOutputError as exc:
        rec["frame_status"], rec["frame_error"] = "failed", str(exc)[:300]
    if graph:
        try:
            facts, _ = await llm.complete_json(facts_messages(p.text, date), FactsOutput,
                                               max_tokens=facts_max_tokens)
            rec["facts"], dropped = guard_facts([f.model_dump(mode="json") for f in facts.facts
                                                 if f.subject.strip() and f.object.strip()], p.text)
            guard.update(dropped)
            rec["facts_status"] = "ok"
        except JsonOutputError as exc:
            rec["facts_status"], rec["facts_error"] = "failed", str(exc)[:300]
    rec["guard"] = dict(guard)
    return rec


def frame_from_record(frame_id: str, passage_id: str, rec: dict[str, Any], fallback_text: str) -> Frame:
    """A frame for one passage; when extraction failed, a plain frame that still points at it."""
    body = rec.get("frame")
    if body is None:
        return Frame(frame_id, fallback_text[:300], [], [passage_id])
    summary = body.get("summary") or ""
    events = [e for e in body.get("events", []) if any(e.get(k) for k in ("action", "participants"))]
    return Frame(frame_id, summary, events, [passage_id])
