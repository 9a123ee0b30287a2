"""Readers of published LoCoMo answer sets (data/published/, SOURCES.md "Published LoCoMo answers").

`convert(source, folder, data_dir, out)` aligns a source folder with locomo10.json and writes it as
an answers file (datasets/answers_file.py), which `memeval import-answers` turns into a run folder.
A source is named by its reader (`evermemos`, `fc`, `zep`, `memobase`, `cognee`, `memu`) or by its
folder's name under data/published/ (`fc-gpt41mini-cot`, `memobase-0710`, `cognee-1.6.5`, ...).
"""

from __future__ import annotations

from pathlib import Path

from ..answers_file import AnswersFileError, write_answers
from .align import AlignmentError, LoCoMoQuestions
from .readers import READERS, Converted

__all__ = ["DATASET", "DATA_FILE", "READERS", "AlignmentError", "Converted", "convert", "reader_name"]

DATASET = "locomo"  # the conf/dataset config the published sets answer (import-answers composes it)
DATA_FILE = "locomo10.json"  # the benchmark file a converted set is aligned with


def reader_name(source: str) -> str:
    """The reader of a source name: a reader's own name, or a folder name that starts with one."""
    if source in READERS:
        return source
    family = source.split("-", 1)[0]
    if family in READERS:
        return family
    raise AnswersFileError(f"no reader for published source {source!r}; known: {', '.join(READERS)} "
                           "(or a data/published/ folder name that starts with one)")


def convert(source: str, folder: Path | str, data_dir: Path | str, out: Path | str | None = None,
            data: LoCoMoQuestions | None = None) -> tuple[Converted, str | None]:
    """Read and align a source folder; write the answers file to `out` when given. Returns the
    conversion and the written file's sha256 (None without `out`)."""
    converted = READERS[reader_name(source)](Path(folder), data or LoCoMoQuestions(data_dir))
    sha = write_answers(out, converted.header, converted.rows) if out is not None else None
    return converted, sha
