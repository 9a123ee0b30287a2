"""EpBench (Huet et al., ICLR 2025) from the official file layout: book.json + parquet tables."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from memeval.model_access.errors import ConfigError

from .integrity import BOOK20, BOOK200, BOOK2000, EPBENCH_FIGSHARE, verify
from .types import ContextCap, Corpus, Dataset, Question, Unit

BOOK_DIRS = {20: BOOK20, 200: BOOK200, 2000: BOOK2000}
_CHAPTER = re.compile(r"(?m)^Chapter (\d+)\s*$")


def bucket_of(n_chapters: int) -> str:
    """Cue bucket by number of matching chapters, cut at [0,1,2,3,6,inf)."""
    if n_chapters <= 0:
        return "0"
    if n_chapters == 1:
        return "1"
    if n_chapters == 2:
        return "2"
    if n_chapters < 6:
        return "3-5"
    return "6+"


BUCKETS = ("0", "1", "2", "3-5", "6+")


def split_chapters(book_text: str) -> list[Unit]:
    """Split the book string at its 'Chapter N' headings; the heading is kept out of the text."""
    marks = list(_CHAPTER.finditer(book_text))
    if not marks:
        raise ConfigError("book.json holds no 'Chapter N' headings: not an EpBench book file")
    units = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(book_text)
        units.append(Unit(id=m.group(1), text=book_text[m.end():end].strip(), position=i,
                          title=f"Chapter {m.group(1)}"))
    return units


def _as_list(value: object) -> list:
    if value is None:
        return []
    return [x.item() if hasattr(x, "item") else x for x in list(value)]  # numpy scalars -> python


class EpBenchLoader:
    """Loads one EpBench book; `book` is 20, 200 or 2000 events (19, 196, 1967 chapters)."""

    def __init__(self, book: int, data_dir: str, context_cap: int | None = None):
        """`context_cap`: chapters allowed in an answer context; None = the data's maximum
        `n_chapters_correct_answer` (3 on the 20-chapter book). The 200- and 2000-chapter books set
        17 in their configs, the GSW paper's cap (the 2000 book's data maximum is far higher)."""
        if book not in BOOK_DIRS:
            raise ConfigError(f"EpBench book must be one of {sorted(BOOK_DIRS)}, not {book}")
        self.book = book
        self.root = Path(data_dir)
        self.cap_override = context_cap

    def load(self) -> Dataset:
        rel = BOOK_DIRS[self.book]
        if self.book == 2000 and not (self.root / rel).exists():
            raise ConfigError(
                f"The 2000-chapter EpBench book is not bundled. Download the official zip "
                f"({EPBENCH_FIGSHARE}), unpack it and place `{rel}` under {self.root}."
            )
        entries = [verify(self.root, f"{rel}/{name}") for name in ("book.json", "df_qa.parquet")]
        book_text = json.loads((self.root / rel / "book.json").read_text(encoding="utf-8"))
        units = split_chapters(book_text)
        corpus = Corpus(id=f"epbench{self.book}", units=tuple(units))
        qa = pd.read_parquet(self.root / rel / "df_qa.parquet")
        questions = [self._question(row, corpus.id) for row in qa.itertuples(index=False)]
        max_chapters = int(qa["n_chapters_correct_answer"].max())
        if self.cap_override is not None:
            cap = ContextCap(max_units=int(self.cap_override),
                             source=f"dataset config; data maximum {max_chapters}")
        else:
            cap = ContextCap(max_units=max_chapters, source="data maximum")
        notes = []
        statuses = {e.status for e in entries}
        if statuses != {"original"}:
            notes.append(f"EpBench {self.book}-event files are {'/'.join(sorted(statuses))} "
                         "(see ../shared/data/SOURCES.md), not byte copies of the official release")
        digest = (entries[0].sha256 or "nohash")[:12]
        return Dataset(
            name=f"epbench{self.book}", version=f"epbench-{self.book}@{digest}-{'+'.join(sorted(statuses))}",
            corpora={corpus.id: corpus}, questions=questions, natural_cap=cap,
            strata_key="bucket", notes=notes,
        )

    @staticmethod
    def _question(row: object, corpus_id: str) -> Question:
        n_ch = int(row.n_chapters_correct_answer)
        gold = [str(x) for x in _as_list(row.correct_answer)]
        chapters = [str(int(x)) for x in _as_list(row.correct_answer_chapters)]
        return Question(
            id=f"q{int(row.q_idx)}-{int(row.debug_level_2)}", corpus_id=corpus_id, text=str(row.question),
            gold=tuple(gold), gold_units=tuple(chapters),
            attrs={"q_idx": int(row.q_idx), "bucket": bucket_of(n_ch), "n_chapters": n_ch, "get": str(row.get),
                   "retrieval_type": str(row.retrieval_type), "cue": str(row.cue),
                   "cue_completed": str(row.cue_completed)},
        )
