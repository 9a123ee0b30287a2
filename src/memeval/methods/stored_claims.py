"""What a method's index stores, one claim at a time, for `memeval health`'s support check.

Each method reads its own index folder (`MemoryMethod.index_claims`): it alone knows its files.
evaluation/health judges the claims against the source and never reads a method's files, so the
layer above (harness/health.py) hands them across the methods/evaluation divide as plain dicts
(`to_dict`), the way it hands `IndexCounters`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class StoredClaim:
    """One stored fact, memory, summary line, frame slot or graph edge.

    - `text`: the claim as the method stores it (a triple read as "subject predicate object");
    - `units`: the ids of the corpus units its provenance names (None: the method records none,
      and the claim is compared with the whole corpus);
    - `where`: a short label of where it is stored, shown in the check's examples.
    """

    text: str
    units: tuple[str, ...] | None
    where: str

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "units": None if self.units is None else list(self.units), "where": self.where}


def read_json(path: Path) -> Any:
    """A saved JSON file, or None when it is missing or unreadable (a claim reader skips it)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
