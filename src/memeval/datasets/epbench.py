"""EpBench (Huet et al., ICLR 2025) from the official file layout: book.json + parquet tables."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd

from memeval.model_access.errors import ConfigError

from .integrity import DataFile, verify
from .types import ContextCap, Corpus, Dataset, Question, Unit

EPB = "epbench/Udefault_Sdefault_seed0"
BOOK20 = f"{EPB}/books/model_claude-3-5-sonnet-20240620_itermax_10_Idefault_nbchapters_19_nbtokens_10397"
BOOK200 = f"{EPB}/books/model_claude-3-5-sonnet-20240620_itermax_10_Idefault_nbchapters_196_nbtokens_102870"
BOOK2000 = f"{EPB}/books/model_claude-3-5-sonnet-20240620_itermax_10_Idefault_nbchapters_1967_nbtokens_1033475"
FIGSHARE = "https://figshare.com/ndownloader/articles/28244480"
# every file with its sha256 (../shared/data/SOURCES.md): what the data step fetches and verifies
DATA_FILES = (
    DataFile(f"{EPB}/events.json", "2a706fbe6c8be2cd19cba935134c68a8d775f6b1db463ae6d8b6cf4ffe2f33c1", "original"),
    DataFile(f"{EPB}/meta_events.json", "10f1bff916a43b610588967381f2b730739a8c8e1c4fe07c37f4888940b2781c", "original"),
    DataFile(f"{BOOK20}/book.json", "95b71880b7ffab7d1e6c2dbeb525a62f385e87cedbd27dd9ed6c0dbe9d0b361d", "original"),
    DataFile(f"{BOOK20}/df_book_groundtruth.parquet", "43be254350852537dce16ee2e2e992e03ab03f4d60cd9ce0c68f8c555ae9e3b0", "original"),
    DataFile(f"{BOOK20}/df_qa.parquet", "efb5255595b165da69d3c8681d68a03ad28ea3650f96af916ca1a4fd7555d221", "original"),
    DataFile(f"{BOOK20}/df_qa_debug_widespreadness.parquet", "83d21193ae33a893de21e945523ddf2e072eeb41a6538303fb5be8dfa525ba6a", "original"),
    DataFile(f"{BOOK200}/book.json", "378cac8b7302b3cc10dc44afa39e2afff46db55b2f3335e67a0f514a00be595a", "reconstructed"),
    DataFile(f"{BOOK200}/df_qa.parquet", "7d8df84f32f75fd205857be65df774532e544f2c0a58f7480311f623034e54d0", "reconstructed"),
    DataFile(f"{BOOK200}/df_qa_debug_widespreadness.parquet", "caa27f313069a2ace6b8b111b4381fdc7d1fe08daaceb27b54a34792e5241ef7", "reconstructed"),
)
# copied with the data when the source has them, never verified (no reference hash exists)
DATA_EXTRAS = (f"{BOOK200}/df_book_groundtruth.parquet", f"{BOOK200}/PROVENANCE.md")
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


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return [x.item() if hasattr(x, "item") else x for x in list(value)]  # numpy scalars -> python


class EpBenchLoader:
    """Loads one EpBench book; `book` is 20, 200 or 2000 events (19, 196, 1967 chapters)."""

    # the data's licence, as a bundle's README states it (../shared/data/SOURCES.md)
    licence = ("EpBench (Huet et al., ICLR 2025; github ahstat/episodic-memory-benchmark, figshare "
               "10.6084/m9.figshare.28244480): MIT")
    data_files = DATA_FILES  # integrity.manifests() collects them through the plugin registry
    data_extras = DATA_EXTRAS
    # `subset.name=<name>` (datasets/subset.py): name -> (what it is, which questions it keeps)
    named_subsets = {"table13": ("the GSW paper's ablation questions (its Table 13): EpBench get == all "
                                 "(548 on the 200-chapter book)", lambda q: q.attrs.get("get") == "all")}

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
                f"({FIGSHARE}), unpack it and place `{rel}` under {self.root}."
            )
        entries = [verify(self.root, f"{rel}/{name}", DATA_FILES) for name in ("book.json", "df_qa.parquet")]
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
    def _question(row: Any, corpus_id: str) -> Question:
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
