"""What the external methods' index counters for `memeval health` share: the worker's
index_done.json, the package's saved tables, and the per-unit records several workers keep.

Each method counts its own index in its own module (its class's `index_counters`, the package's
extraction-prompt examples beside it); nothing here imports a package or names a method."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..output_guard import name_counts

DONE = "index_done.json"


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def worker_index(folder: Path) -> dict[str, Any]:
    """What the worker's `index` op returned, as index_done.json keeps it ({} before it is written)."""
    done = load_json(folder / DONE) if (folder / DONE).exists() else {}
    return done.get("index") or {}


def read_parquet(path: Path) -> Any:
    import pandas as pd  # only when the tables are there (a bundle leaves them out)

    return pd.read_parquet(path)


def column(table: Any, name: str) -> list[str]:
    """A table's text column as strings ([] without the table or the column)."""
    return [] if table is None or name not in table.columns else [str(v) for v in table[name]]


COPY_SHARE = 0.8  # a memory copies its unit when this share of its word 6-grams are the unit's own
_WORD = re.compile(r"[a-z0-9']+")


def _six_grams(text: str) -> list[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return [tuple(words[i:i + 6]) for i in range(len(words) - 5)]


def source_copies(memories: list[tuple[str, str]]) -> list[int]:
    """[memories that copy their unit's text, memories long enough to tell (6 words or more)],
    over (memory, its unit's text) pairs: a stored fact restates, a copy repeats whole runs of
    words (mem0 at 1.5B on EpBench stored the chapters' sentences as they were)."""
    copied = counted = 0
    unit_grams: dict[str, set[tuple[str, ...]]] = {}
    for memory, unit_text in memories:
        grams = _six_grams(memory)
        if not grams:
            continue
        if unit_text not in unit_grams:
            unit_grams[unit_text] = set(_six_grams(unit_text))
        counted += 1
        copied += sum(g in unit_grams[unit_text] for g in grams) >= COPY_SHARE * len(grams)
    return [copied, counted]


def structured_calls(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    """What the package's structured (JSON) model calls gave, summed over the units."""
    keys = ("chat_attempts", "chat_failed", "schema_invalid")
    keys += ("schema_repaired",) if any("schema_repaired" in e for e in episodes) else ()  # mem0 since 2026-12-04
    out: dict[str, Any] = {k: sum(int(e.get(k, 0)) for e in episodes) for k in keys}
    out["failed_units"] = sum(1 for e in episodes if e.get("error"))
    return out


def per_episode(episodes: list[dict[str, Any]], facts_label: str) -> dict[str, Any]:
    """The counters Graphiti's and cognee's per-episode records share: units, the episodes
    without facts (reported as `facts_label`) or entities, and the entity names' shape."""
    n, bad, samples = name_counts([str(x) for e in episodes for x in e.get("entities", [])])
    return {"units": len(episodes),
            "empty": {facts_label: [sum(1 for e in episodes if not e.get("facts")), len(episodes)],
                      "entities": [sum(1 for e in episodes if not e.get("entities")), len(episodes)]},
            "names": n, "names_not_noun_phrase": bad, "name_samples": samples}


def episodes_of(folder: Path) -> list[dict[str, Any]] | None:
    episodes = worker_index(folder).get("episodes")
    if episodes is None and (folder / "package" / "episodes.json").exists():
        episodes = load_json(folder / "package" / "episodes.json")
    return episodes or None
