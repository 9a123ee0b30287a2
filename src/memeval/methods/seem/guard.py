"""SEEM's output guard: frame events and facts that the passage does not support are dropped
and counted per passage (see methods/output_guard.py for why).

- an event participant whose name does not occur in the passage is removed; an event left with
  no participant and an action the passage does not support is dropped;
- a summary that names the example's people while the passage does not is dropped;
- an event or fact value that repeats one of the prompt's example values while the passage does
  not contain it is dropped (the whole event when its action was copied);
- a fact whose subject or object does not occur in the passage is dropped.
Deterministic, so the counts can be recomputed from the cached replies.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..output_guard import ChunkText, copied
from .prompts import EXAMPLE_NAMES, EXAMPLE_VALUES

# Part of the index identity (SeemMethod.params): a guard change alters stored frames without any
# new model call, so an index built under an older guard must not be reused (a bundle replay
# rebuilds it with the current guard and would otherwise disagree with the stored run).
GUARD_VERSION = "seem-guard-2"  # 2: also drops a summary naming the example's people

_SLOTS = ("time_raw", "location", "reason", "method")


def guard_frame(frame: dict[str, Any], text: str) -> tuple[dict[str, Any], Counter[str]]:
    """The frame without invented participants, copied example values and unsupported events."""
    ct, counts, events = ChunkText(text), Counter(), []
    for e in frame.get("events", []):
        if copied([e.get("action", "")], ct, EXAMPLE_VALUES):
            counts["events_dropped"] += 1
            continue
        people = [n for n in e.get("participants", []) if ct.has_name(n) and not copied([n], ct, EXAMPLE_VALUES)]
        counts["participants_dropped"] += len(e.get("participants", [])) - len(people)
        if not people and not ct.has_name(e.get("action", "")):
            counts["events_dropped"] += 1
            continue
        e = {**e, "participants": people}
        for slot in _SLOTS:
            if e.get(slot) and copied([e[slot]], ct, EXAMPLE_VALUES):
                counts["values_dropped"] += 1
                e[slot] = ""
        events.append(e)
    summary = frame.get("summary", "")
    in_summary = ChunkText(summary)
    if copied([summary], ct, EXAMPLE_VALUES) or any(
            in_summary.has_phrase(v) and not ct.has_phrase(v) for v in EXAMPLE_NAMES):
        counts["summaries_dropped"] += 1
        summary = ""
    counts = +counts
    if counts:
        counts["replies_guarded"] = 1
    return {**frame, "summary": summary, "events": events}, counts


def guard_facts(facts: list[dict[str, Any]], text: str) -> tuple[list[dict[str, Any]], Counter[str]]:
    """The facts whose subject and object occur in the passage and that copy no example value."""
    ct, counts, kept = ChunkText(text), Counter(), []
    for f in facts:
        values = [f.get("subject", ""), f.get("predicate", ""), f.get("object", "")]
        if copied(values, ct, EXAMPLE_VALUES) or not (ct.has_name(values[0]) and ct.has_name(values[2])):
            counts["facts_dropped"] += 1
            continue
        kept.append(f)
    return kept, +counts
