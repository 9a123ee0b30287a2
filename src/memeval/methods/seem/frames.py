"""Episodic Event Frames: one extraction call per passage (passages.py says what a passage is).

Each passage gets one frame call (summary + events with participants, action,
absolute and raw time, location, reason, method) and, when the graph layer is on, one facts
call (quadruples). Two calls with small schemas rather than one combined call: a 0.5B-1.5B
model under a JSON grammar fills a small schema far more reliably than a nested one, and the
`seem_no_graph` ablation then simply skips the facts call. Frames carry provenance pointers
(passage ids); the code adds them, never the model.

With `frame_retry` a frame reply that, after the guard, has no event, or whose summary copies
the passage's opening (the prompt forbids it; on EpBench-20 the 0.5B model did both in the same
4 of 19 replies: it continued the passage instead of describing it, then copied the worked
example's events, which the guard dropped), is asked once more in a follow-up turn naming what
was wrong. The better reply is kept; a copied summary left beside real events is cleared (the
events then carry the frame). Each passage record says what happened (`retry`), and the index
summary counts it (`frame_retry`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from memeval.model_access.errors import JsonOutputError

from ..output_guard import norm
from .guard import guard_facts, guard_frame
from .passages import Passage, split_passages
from .prompts import facts_messages, frame_messages, frame_retry_turn
from .schemas import FactsOutput, FrameOutput

__all__ = ["Frame", "Passage", "event_line", "extract_passage", "frame_from_record", "split_passages"]

OPENING_WORDS = 8  # a summary whose first 8 words are the passage's first 8 copies its opening
# how bad each problem is when choosing between the first reply and the retry: a frame without
# events is worse than a copied summary (which is cleared when events stand beside it)
_WEIGHT = {"no_events": 2, "summary_copies_opening": 1}


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


def copies_opening(summary: str, text: str, n: int = OPENING_WORDS) -> bool:
    """Whether the summary starts with the passage's first n words (normalised)."""
    s, t = norm(summary).split(), norm(text).split()
    return len(s) >= n and len(t) >= n and s[:n] == t[:n]


def kept_events(frame: dict[str, Any]) -> list[dict[str, Any]]:
    """The events a frame keeps (frame_from_record's rule: an action or a participant)."""
    return [e for e in frame.get("events", []) if any(e.get(k) for k in ("action", "participants"))]


def frame_problems(frame: dict[str, Any], text: str) -> list[str]:
    """What a guarded frame reply got wrong that a retry may fix."""
    out = [] if kept_events(frame) else ["no_events"]
    return out + (["summary_copies_opening"] if copies_opening(frame.get("summary", ""), text) else [])


async def _retry(llm: Any, messages: list[dict[str, str]], reply: str, first: dict[str, Any],
                 problems: list[str], text: str, max_tokens: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """One follow-up frame call; (the frame kept, what the retry did)."""
    info: dict[str, Any] = {"problems": problems, "status": "ok", "chosen": "first"}
    frame, left = first, problems
    try:
        out, _ = await llm.complete_json(frame_retry_turn(messages, reply, problems), FrameOutput,
                                         max_tokens=max_tokens)
        second, dropped = guard_frame(out.model_dump(mode="json"), text)
        again = frame_problems(second, text)
        info["guard"] = dict(dropped)
        if sum(_WEIGHT[x] for x in again) < sum(_WEIGHT[x] for x in problems):
            frame, left, info["chosen"] = second, again, "retry"
    except JsonOutputError as exc:
        info["status"], info["error"] = "failed", str(exc)[:200]
    if "summary_copies_opening" in left and "no_events" not in left:  # repaired: the events carry the frame
        frame, info["summary_cleared"] = {**frame, "summary": ""}, True
        left = [x for x in left if x != "summary_copies_opening"]
    info["left"] = left  # what neither the retry nor the repair fixed
    return frame, info


async def extract_passage(llm: Any, p: Passage, *, graph: bool, frame_max_tokens: int,
                          facts_max_tokens: int, with_date: bool = True, retry: bool = False) -> dict[str, Any]:
    """The frame (and facts) of one passage; a call whose JSON stays invalid is recorded, not fatal.
    Without the date, times stay as written (the context still shows each passage's date).
    `retry`: one follow-up call for a frame without events or with a copied summary."""
    date = p.date if with_date else None
    rec: dict[str, Any] = {"key": p.key if with_date else p.text_key, "frame": None, "frame_status": "ok",
                           "facts": [], "facts_status": "off", "guard": {}}
    guard: Counter[str] = Counter()
    try:
        messages = frame_messages(p.text, date)
        out, result = await llm.complete_json(messages, FrameOutput, max_tokens=frame_max_tokens)
        rec["frame"], dropped = guard_frame(out.model_dump(mode="json"), p.text)
        guard.update(dropped)
        problems = frame_problems(rec["frame"], p.text) if retry else []
        if problems:
            rec["frame"], rec["retry"] = await _retry(llm, messages, result.text, rec["frame"], problems,
                                                      p.text, frame_max_tokens)
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
    return Frame(frame_id, body.get("summary") or "", kept_events(body), [passage_id])


def retry_counts(records: list[dict[str, Any]]) -> dict[str, int]:
    """The index summary's `frame_retry`: frames asked again, why, and how it ended (`left_*`:
    still wrong after the retry and the repair; `fixed`: nothing left)."""
    infos = [r["retry"] for r in records if r.get("retry")]
    c: Counter[str] = Counter({k: 0 for k in ("chosen_retry", "fixed", "summary_cleared", "failed",
                                              *(f"{w}_{p}" for w in ("asked", "left") for p in _WEIGHT))})
    c["asked"] = len(infos)
    for info in infos:
        c.update(f"asked_{p}" for p in info["problems"])
        c.update(f"left_{p}" for p in info.get("left", []))
        c["chosen_retry"] += info.get("chosen") == "retry"
        c["fixed"] += not info.get("left")
        c["summary_cleared"] += bool(info.get("summary_cleared"))
        c["failed"] += info.get("status") == "failed"
    return dict(sorted(c.items()))
