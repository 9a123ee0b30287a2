"""The EpBench universe: every date, place, person and event type a story could mention.

The deterministic matcher needs the values of each kind that an answer might name, gold or not,
so that a wrong place counts as a claimed item and a refusal that repeats the cue does not.
EpBench draws all books of one seed from one list of events (`events.json`: date, location,
protagonist, event type, detail); the book's `df_book_groundtruth.parquet`, where present, adds
the other people of each chapter (`post_entities`) and maps chapters to events. Read here, not
in the loader, so that scoring needs nothing but the data folder.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from memeval.datasets.epbench import BOOK_DIRS

from .grounding import GENERIC_EVENT_WORDS, content_tokens, stem

KIND_BY_RETRIEVAL = {
    "Times": "date", "Spaces": "location", "Entities": "person", "Other entities": "person",
    "Event contents": "event_type", "Full event details": "chapter",
}


@dataclass(frozen=True)
class Chapter:
    """What one chapter is about; its other people and detail tell a real account from a guess."""

    date: str
    location: str
    entity: str
    event_type: str
    post_entities: tuple[str, ...]
    detail: str | None


@dataclass(frozen=True)
class Universe:
    dates: frozenset[str] = frozenset()
    locations: frozenset[str] = frozenset()
    people: frozenset[str] = frozenset()
    event_types: frozenset[str] = frozenset()
    chapters: dict[str, Chapter] = field(default_factory=dict)
    source: str = "empty"
    # every detail events.json gives an event type (all books of the seed share the list), and the
    # words of this book's chapters by event type: what grounding version 2 reads event evidence from
    details: dict[str, tuple[str, ...]] = field(default_factory=dict)
    chapter_words: dict[str, frozenset[str]] = field(default_factory=dict)

    def values(self, kind: str | None) -> frozenset[str]:
        return {"date": self.dates, "location": self.locations, "person": self.people,
                "event_type": self.event_types}.get(kind or "", frozenset())

    @property
    def generic_event_words(self) -> frozenset[str]:
        """Words shared by several event types ("festival", "night"): they name no single one."""
        counts = Counter(stem(w) for e in self.event_types for w in set(content_tokens(e)))
        return GENERIC_EVENT_WORDS | {w for w, n in counts.items() if n > 1}


def _events_path(root: Path, book: int) -> Path:
    return root / BOOK_DIRS[book].split("/books/")[0] / "events.json"


@lru_cache(maxsize=8)
def load_universe(data_dir: str | Path | None, book: int | None) -> Universe:
    """The universe of `book` under `data_dir`; an empty one when the files are not there."""
    if data_dir is None or book not in BOOK_DIRS:
        return Universe()
    root = Path(data_dir)
    events_file = _events_path(root, book)
    if not events_file.exists():
        return Universe()
    events = json.loads(events_file.read_text(encoding="utf-8"))
    dates = {str(e[0]) for e in events}
    locations = {str(e[1]) for e in events}
    people = {str(e[2]) for e in events}
    event_types = {str(e[3]) for e in events}
    details: dict[str, list[str]] = {}
    for e in events:
        if len(e) > 4:
            details.setdefault(str(e[3]), []).append(str(e[4]))
    chapters: dict[str, Chapter] = {}
    source = "events.json"
    truth = root / BOOK_DIRS[book] / "df_book_groundtruth.parquet"
    if truth.exists():
        import pandas as pd

        df = pd.read_parquet(truth)
        for row in df.itertuples(index=False):
            post = tuple(str(x) for x in (row.post_entities if row.post_entities is not None else []))
            people.update(post)
            idx = int(row.raw_generated_paragraph_idx)
            detail = str(events[idx][4]) if 0 <= idx < len(events) and len(events[idx]) > 4 else None
            if detail is not None and list(events[idx][:4]) != [row.date, row.location, row.entity, row.content]:
                detail = None  # the chapter is not that event: no detail rather than a wrong one
            chapters[str(int(row.chapter))] = Chapter(str(row.date), str(row.location), str(row.entity),
                                                      str(row.content), post, detail)
        source += " + df_book_groundtruth.parquet"
    return Universe(frozenset(dates), frozenset(locations), frozenset(people), frozenset(event_types),
                    chapters, source, {t: tuple(d) for t, d in details.items()},
                    _chapter_words(root / BOOK_DIRS[book] / "book.json", chapters))


def _chapter_words(book_file: Path, chapters: dict[str, Chapter]) -> dict[str, frozenset[str]]:
    """Event type -> the (plural-insensitive) content words of this book's chapters of that type."""
    if not book_file.exists() or not chapters:
        return {}
    from memeval.datasets.epbench import split_chapters

    out: dict[str, set[str]] = {}
    for unit in split_chapters(json.loads(book_file.read_text(encoding="utf-8"))):
        ch = chapters.get(unit.id)
        if ch is not None:
            out.setdefault(ch.event_type, set()).update(stem(w) for w in content_tokens(unit.text))
    return {t: frozenset(w) for t, w in out.items()}
