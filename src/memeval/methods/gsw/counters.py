"""GSW's index counters for `memeval health`, read from a corpus' saved workspaces (no model).

Units are chapters. A chapter is empty of a structure when its workspace holds no entity, no
Space/Time node with a value, or no entity summary. Names are the entities' names; example
copies are stored values equal to one of the Operator prompts' invented examples (any prompt
version) that the chapter's text does not contain, i.e. what got past the guard, while
`extra["guard_dropped_copies"]` counts the replies the guard caught copying. Under
`validate_kinds`, `extra["validation"]` has what the kind checks (kinds.py) did to the replies:
{"dropped": {kind: [dropped, checked]}, "repaired": {...}} with entities, roles, places and times
checked (the values in the raw replies), for the health check `kind_drops`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..base import IndexCounters
from ..output_guard import ChunkText, copied, name_counts
from .guard import ALL_EXAMPLES
from .kinds import link_key

STRUCTURES = ("entities", "space_time", "summaries")


def _workspaces(folder: Path) -> Iterator[dict[str, Any]]:
    """Each chapter's workspace: chapters/<id>.json, or the one global workspace."""
    chapters = sorted((folder / "chapters").glob("*.json"))
    paths = chapters or [p for p in [folder / "global" / "workspace.json"] if p.exists()]
    for p in paths:
        yield json.loads(p.read_text(encoding="utf-8"))


def _values(ws: dict[str, Any]) -> list[str]:
    out = [e["name"] for e in ws["entities"].values()]
    for e in ws["entities"].values():
        for r in e.get("roles", []):
            out += [r.get("role", ""), *r.get("states", [])]
    out += [v.get("phrase", "") for v in ws.get("verbs", {}).values()]
    out += [h.get("value", "") for n in ws.get("nodes", {}).values() for h in n.get("history", [])]
    return [v for v in out if v]


def _per_chapter(ws: dict[str, Any]) -> dict[str, dict[str, int]]:
    """chapter id -> count of each structure (a global workspace spans several chapters)."""
    chapter_of = {c["id"]: c["chapter"] for c in ws.get("chunks", [])}
    counts = {ch: dict.fromkeys(STRUCTURES, 0) for ch in ws.get("chapters", [])}
    for e in ws["entities"].values():
        for ch in {chapter_of.get(c) for c in e.get("chunks", [])} & counts.keys():
            counts[ch]["entities"] += 1
        for ch in set(e.get("summaries", {})) & counts.keys():
            counts[ch]["summaries"] += 1
    for n in ws.get("nodes", {}).values():
        for ch in {chapter_of.get(h.get("chunk")) for h in n.get("history", [])} & counts.keys():
            counts[ch]["space_time"] += 1
    return counts


# guard-record key -> (what was done, the kind checked)
KIND_KEYS = {"kind_entities_dropped": ("dropped", "entities"), "kind_roles_dropped": ("dropped", "roles"),
             "kind_places_dropped": ("dropped", "places"), "kind_times_dropped": ("dropped", "times"),
             "kind_names_repaired": ("repaired", "entities"), "kind_places_to_times": ("repaired", "places"),
             "speaker_states_moved": ("repaired", "speaker_lines"), "speaker_roles_moved": ("repaired", "speaker_lines")}


def _checked(chunk: dict[str, Any]) -> dict[str, int]:
    """How many values of each kind a chunk's raw replies hold (what the kind checks looked at):
    distinct links for a chunk checked at kinds version 3 or later, which removed exact repeats
    first (its guard record's `kinds_checked`), every line for one checked before."""
    entities = (chunk.get("operator") or {}).get("entities", [])
    links = (chunk.get("space_time") or {}).get("links", [])
    if int((chunk.get("guard") or {}).get("kinds_checked", 0)) >= 3:
        distinct = {link_key(x.get("kind", ""), x.get("value"), list(x.get("entity_ids", []))): x for x in links}
        links = list(distinct.values())
    return {"entities": len(entities), "roles": sum(len(e.get("roles", [])) for e in entities),
            "places": sum(1 for link in links if link.get("kind") == "space" and link.get("value")),
            "times": sum(1 for link in links if link.get("kind") == "time" and link.get("value")),
            "speaker_lines": sum(len(r.get("states", [])) + 1 for e in entities for r in e.get("roles", []))}


def kind_validation(chunks: list[dict[str, Any]]) -> dict[str, dict[str, list[int]]] | None:
    """{"dropped": {kind: [dropped, checked]}, "repaired": {...}} over the chunks the kind checks
    saw (guard record `kinds_checked`); None when they saw none (an index built without them)."""
    seen = [c for c in chunks if (c.get("guard") or {}).get("kinds_checked")]
    if not seen:
        return None
    checked: dict[str, int] = {}
    for c in seen:
        for kind, n in _checked(c).items():
            checked[kind] = checked.get(kind, 0) + n
    out: dict[str, dict[str, list[int]]] = {
        "dropped": {k: [0, checked[k]] for k in ("entities", "roles", "places", "times")},
        "repaired": {k: [0, checked[k]] for k in ("entities", "places", "speaker_lines")}}
    for c in seen:
        for key, n in (c.get("guard") or {}).items():
            if key in KIND_KEYS:
                what, kind = KIND_KEYS[key]
                out[what][kind][0] += int(n)
    return out


def gsw_counters(folder: Path) -> IndexCounters | None:
    chapters: dict[str, dict[str, int]] = {}
    names: list[str] = []
    copies: list[str] = []
    caught = 0
    values = 0  # the base of the copy share: every value the copies were looked for in
    chunks: list[dict[str, Any]] = []
    for ws in _workspaces(folder):
        chunks += ws.get("chunks", [])
        chapters.update(_per_chapter(ws))
        names += [e["name"] for e in ws["entities"].values()]
        text = ChunkText(" ".join(c.get("text", "") for c in ws.get("chunks", [])))
        stored = _values(ws)
        values += len(stored)
        copies += copied(stored, text, ALL_EXAMPLES)
        caught += sum(int((c.get("guard") or {}).get("replies_copying_examples", 0)) for c in ws.get("chunks", []))
    if not chapters:
        return None
    n, bad, samples = name_counts(names)
    return IndexCounters(
        units=len(chapters),
        empty={s: [sum(1 for c in chapters.values() if not c[s]), len(chapters)] for s in STRUCTURES},
        names=n, names_not_noun_phrase=bad, name_samples=samples,
        example_copies=len(copies), copy_samples=sorted(set(copies))[:5], values=values,
        extra={"guard_dropped_copies": caught,
               **({"validation": v} if (v := kind_validation(chunks)) is not None else {})})
