"""SEEM's index counters for `memeval health`, read from a corpus' memory.json and graph.json.

- units: the memory's frames (after fusion); a frame with no event is empty of events. Facts
  are counted per passage (the frames' provenance), as the facts call runs per passage.
- names: event participants and the graph's entity names.
- example copies: stored values that contain one of the frame prompt's invented multi-word
  examples ("Harbour Bakery", "Mira Tolk"). The passage text is not stored with the frames, so
  unlike the guard this cannot check that the passage lacks it: the examples are invented so
  that no data holds them.
- fusion: judged pairs, merges, and merges whose own reason says the frames differ (the judge
  wrote "a different event" and the verdict still merged), with their reasons; pairs the veto
  kept from the judge (memory.json `vetoed`) and, under prompt version 3, why judged pairs did
  not merge.
- frame retry (`frame_retry: true`): from summary.json, frames asked again because they had no
  event or copied the passage's opening, and what was left after the retry.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from ..base import IndexCounters
from ..output_guard import name_counts, norm
from .prompts import EXAMPLE_VALUES
from .verdict import CONTRADICTS

_EXAMPLES = [f" {norm(v)} " for v in EXAMPLE_VALUES if len(norm(v).split()) > 1]


def _copies(values: list[str]) -> list[str]:
    return [v for v in values if any(e in f" {norm(v)} " for e in _EXAMPLES)]


def _event_values(frames: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for f in frames:
        out.append(f.get("summary", ""))
        for e in f.get("events", []):
            out += [*e.get("participants", []), *(str(e.get(k) or "") for k in
                                                  ("action", "time_raw", "location", "reason", "method"))]
    return [v for v in out if v]


def fusion_counts(decisions: list[dict[str, Any]], vetoed: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    merged = [d for d in decisions if d.get("merged")]
    against = [d for d in merged if CONTRADICTS.search(str(d.get("reason", "")))]
    out: dict[str, Any] = {
        "judged": len(decisions), "merged": len(merged), "contradicting": len(against),
        "contradicting_reasons": [f"{d.get('new')}->{d.get('existing')}: {str(d.get('reason', ''))[:160]}"
                                  for d in against]}
    if vetoed:
        out["vetoed"] = dict(sorted(Counter(str(v.get("veto")) for v in vetoed).items()))
    refused = Counter(str(d["refused"]) for d in decisions if d.get("refused"))
    if refused:
        out["refused"] = dict(sorted(refused.items()))
    return out


def seem_counters(folder: Path) -> IndexCounters | None:
    if not (folder / "memory.json").exists():
        return None
    memory = json.loads((folder / "memory.json").read_text(encoding="utf-8"))
    summary_path = folder / "summary.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.exists() else {}
    graph_path = folder / "graph.json"
    graph = json.loads(graph_path.read_text(encoding="utf-8")) if graph_path.exists() else None
    frames = memory.get("frames", [])
    passages = sorted({p for f in frames for p in f.get("provenance", [])})
    empty: dict[str, list[int]] = {"events": [sum(1 for f in frames if not f.get("events")), len(frames)]}
    names = [p for f in frames for e in f.get("events", []) for p in e.get("participants", [])]
    stored = list(_event_values(frames))  # the base of the copy share, with the facts' values below
    copies = _copies(stored)
    if graph is not None:  # the seem_no_graph ablation has no facts layer
        with_facts = {str(f.get("passage")) for f in graph.get("facts", [])}
        empty["facts"] = [sum(1 for p in passages if p not in with_facts), len(passages)]
        names += list(graph.get("names", []))
        fact_values = [v for f in graph.get("facts", []) for k in ("subject", "predicate", "object")
                       if (v := str(f.get(k, "")))]
        stored += fact_values
        copies += _copies(fact_values)
    n, bad, samples = name_counts(names)
    return IndexCounters(
        units=len(frames), empty=empty, names=n, names_not_noun_phrase=bad, name_samples=samples,
        example_copies=len(copies), copy_samples=sorted({c[:80] for c in copies})[:5], values=len(stored),
        extra={"passages": len(passages), "fusion": fusion_counts(memory.get("decisions", []), memory.get("vetoed")),
               **({"frame_retry": summary["frame_retry"]} if "frame_retry" in summary else {})})
