"""The claims an index folder stores, for the support check: one per stored fact, memory,
summary line, frame slot or graph edge, with the units it came from where the method records it.

Read from the saved files of one corpus's index folder as plain JSON (no method code: evaluation/
never imports methods/), one small reader per stored layout, chosen by the files the folder
holds. A layout not read here (cognee's and graphiti's graph databases are not bundled,
GraphRAG's tables) gives no index claims: their claims are still read where they reach a
context. Moving these readers into each method (an `index_claims` beside `index_counters`) is
the cleaner home; they live here while the check is young.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_GSW_LINE = re.compile(r"^- \[(\d+)\.\d+\] [a-z ]+: (.+)$")  # "- [12.6] when: Jon's studio is open ..."
_SEP = "<SEP>"


@dataclass(frozen=True)
class Claim:
    """One stored claim: its text, the units it came from (None: not recorded), and where it is
    stored (a short label for examples)."""

    text: str
    units: tuple[str, ...] | None
    where: str


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _gsw(folder: Path) -> Iterator[Claim]:
    """GSW: each fact line of each entity's chapter summary (its chunk names the chapter)."""
    for path in sorted((folder / "chapters").glob("*.json")):
        data = _load(path)
        if not isinstance(data, dict):
            continue
        for ent in (data.get("entities") or {}).values():
            for chapter, text in (ent.get("summaries") or {}).items():
                for line in str(text).splitlines():
                    m = _GSW_LINE.match(line.strip())
                    if m:
                        yield Claim(m.group(2), (m.group(1) or str(chapter),), f"GSW summary of {ent.get('name')}")


def _seem(folder: Path) -> Iterator[Claim]:
    """SEEM: each frame's summary and each event (participants, action, place, reason, method)."""
    data = _load(folder / "memory.json")
    for frame in (data or {}).get("frames") or []:
        units = tuple(str(u) for u in frame.get("provenance") or ()) or None
        fid = frame.get("id")
        if frame.get("summary"):
            yield Claim(str(frame["summary"]), units, f"SEEM {fid} summary")
        for ev in frame.get("events") or []:
            who = " and ".join(str(p) for p in ev.get("participants") or [])
            text = " ".join(x for x in (who, str(ev.get("action") or "")) if x).strip()
            if text:
                yield Claim(text, units, f"SEEM {fid} event")
            for slot in ("location", "reason", "method"):
                if str(ev.get(slot) or "").strip():
                    yield Claim(str(ev[slot]), units, f"SEEM {fid} {slot}")


def _mem0(folder: Path) -> Iterator[Claim]:
    data = _load(folder / "package" / "memories.json")
    for m in (data or {}).get("memories") or []:
        if str(m.get("memory") or "").strip():
            unit = m.get("unit")
            yield Claim(str(m["memory"]), (str(unit),) if unit is not None else None, "mem0 memory")


def _lightrag(folder: Path) -> Iterator[Claim]:
    """LightRAG: each entity's and relation's description (file_path names the units)."""
    for name, kind in (("vdb_entities.json", "entity"), ("vdb_relationships.json", "relation")):
        data = _load(folder / "package" / name)
        for row in (data or {}).get("data") or []:
            text = str(row.get("content") or "")
            body = text.split("\n", 2)[-1] if kind == "relation" else text.split("\n", 1)[-1]
            units = tuple(u for u in str(row.get("file_path") or "").split(_SEP) if u) or None
            for part in body.split(_SEP):
                if part.strip():
                    yield Claim(part.strip(), units, f"LightRAG {kind}")


def _hipporag(folder: Path) -> Iterator[Claim]:
    """HippoRAG 2: each OpenIE triple, read as "subject predicate object"."""
    for path in sorted((folder / "package").glob("openie_results*.json")):
        for doc in (_load(path) or {}).get("docs") or []:
            triples = doc.get("extracted_triples") or []
            if isinstance(triples, str):
                try:
                    triples = json.loads(triples.replace("'", '"'))
                except ValueError:
                    triples = []
            for t in triples:
                if isinstance(t, list | tuple) and t:
                    yield Claim(" ".join(str(x) for x in t), None, "HippoRAG triple")


_READERS = (("chapters", _gsw), ("memory.json", _seem), ("package/memories.json", _mem0),
            ("package/vdb_relationships.json", _lightrag), ("package", _hipporag))


def stored_claims(folder: Path, limit: int = 20_000) -> list[Claim] | None:
    """The claims one corpus's index folder stores (None: no layout read here)."""
    for marker, reader in _READERS:
        if (folder / marker).exists():
            if reader is _hipporag and not list((folder / "package").glob("openie_results*.json")):
                continue
            out = []
            for claim in reader(folder):
                out.append(claim)
                if len(out) >= limit:
                    break
            return out
    return None


def index_claims(index: dict[str, Any] | None) -> dict[str, list[Claim] | None] | None:
    """Corpus id -> its stored claims (None: no layout read), from the index view harness/health.py
    hands over (`root`: the resolved index folder); None for a method that extracts nothing."""
    if not index or not index.get("extracts"):
        return None
    root = index.get("root")
    out: dict[str, list[Claim] | None] = {}
    for cid in index.get("corpora") or {}:
        folder = Path(root) / cid if root else None
        out[cid] = stored_claims(folder) if folder is not None and folder.is_dir() else None
    return out
