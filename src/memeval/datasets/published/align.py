"""Aligning published LoCoMo answer rows with this framework's question ids (`<sample_id>-q<qa_index>`).

The rules (data/SOURCES.md, "Published LoCoMo answers"): conversation i is the i-th entry of
locomo10.json; row k within it is the k-th `qa` entry whose category is not 5, unless the source
gives the index itself (then it is checked against the same data). A row whose question text,
gold or category the source states must agree with locomo10.json (after undoing a source's
documented renames); text alone never places a row (conv-48 repeats 11 question/gold pairs).
Every row that fails is counted and the first ones shown in one `AlignmentError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..answers_file import AnswersFileError
from ..locomo import LoCoMoLoader
from ..types import Dataset, Question

SHOWN = 5


class AlignmentError(AnswersFileError):
    """Rows of a published file that do not align with locomo10.json (counted, first ones shown)."""


@dataclass(frozen=True)
class Candidate:
    """One published row, where the source places it: conversation index `conv`, and either its
    qa index (`qa_index`, given by the source) or its position among the conversation's
    category 1-4 rows (`position`). Text fields the source states are checked, not used to place."""

    label: str  # how the source names the row, for errors: "locomo_exp_user_0 #4"
    conv: int
    qa_index: int | None = None
    position: int | None = None
    question: str | None = None
    gold: Any = None
    category: int | None = None
    sample_id: str | None = None
    renames: tuple[tuple[str, str], ...] = ()  # (as published, locomo10.json's): undone before comparing


class LoCoMoQuestions:
    """locomo10.json as the loader reads it (every category), indexed by conversation position."""

    def __init__(self, data_dir: Path | str):
        self.dataset: Dataset = LoCoMoLoader(str(data_dir)).load()
        self.samples = list(self.dataset.corpora)
        self.by_id = {q.id: q for q in self.dataset.questions}
        self.positional: list[list[int]] = []
        for sid in self.samples:
            qs = [q for q in self.dataset.questions if q.corpus_id == sid]
            self.positional.append([int(q.id.rsplit("-q", 1)[1]) for q in qs if int(q.attrs["category"]) != 5])

    @property
    def version(self) -> str:
        return self.dataset.version

    def question(self, conv: int, qa_index: int) -> Question | None:
        if not 0 <= conv < len(self.samples):
            return None
        return self.by_id.get(f"{self.samples[conv]}-q{qa_index}")


def undo(text: str, renames: tuple[tuple[str, str], ...]) -> str:
    for published, original in renames:
        # the name as a word, or followed by "s" (the data writes "Johns's" once)
        text = re.sub(rf"\b{re.escape(published)}(?=s?\b)", original, text)
    return text


def _gold_of(q: Question) -> str:
    """The gold a source would state: a category-5 question's own `answer` field where it has one."""
    return str(q.attrs.get("answer_field", q.gold[0])) if int(q.attrs["category"]) == 5 else q.gold[0]


def _short(s: Any) -> str:
    s = str(s)
    return s if len(s) <= 60 else s[:57] + "..."


def _problem(c: Candidate, data: LoCoMoQuestions) -> tuple[str | None, str | None]:
    """(question id, None) when the row aligns, else (id or None, what disagrees)."""
    if not 0 <= c.conv < len(data.samples):
        return None, f"conversation index {c.conv} (locomo10.json has {len(data.samples)})"
    sid = data.samples[c.conv]
    if c.sample_id is not None and c.sample_id != sid:
        return None, f"conversation {c.sample_id!r} is entry {c.conv} of locomo10.json, which is {sid}"
    slots = data.positional[c.conv]
    j = c.qa_index
    if c.position is not None:
        if c.position >= len(slots):
            return None, f"row {c.position} of {sid}, which has {len(slots)} category 1-4 questions"
        if j is not None and j != slots[c.position]:
            return None, f"{sid} qa index {j} given, but row {c.position} is qa index {slots[c.position]}"
        j = slots[c.position]
    assert j is not None, "a candidate names its qa index or its position"
    q = data.question(c.conv, j)
    if q is None:
        return None, f"{sid} has no qa index {j}"
    if c.category is not None and int(c.category) != int(q.attrs["category"]):
        return q.id, f"{q.id}: category {c.category} vs {q.attrs['category']}"
    if c.question is not None and undo(str(c.question), c.renames).strip() != q.text.strip():
        return q.id, f"{q.id}: question {_short(c.question)!r} vs {_short(q.text)!r}"
    if c.gold is not None and undo(str(c.gold), c.renames).strip() != _gold_of(q).strip():
        return q.id, f"{q.id}: gold {_short(c.gold)!r} vs {_short(_gold_of(q))!r}"
    return q.id, None


def align(candidates: list[Candidate], data: LoCoMoQuestions, what: str) -> list[str]:
    """The question id of every candidate, in order; one AlignmentError counting every row that
    does not align (or lands on a question another row took) and showing the first ones."""
    ids: list[str] = []
    bad: list[str] = []
    seen: dict[str, str] = {}
    for i, c in enumerate(candidates):
        qid, problem = _problem(c, data)
        if problem is None and qid in seen:
            problem = f"{qid} already taken by {seen[qid]}"
        if problem is not None:
            bad.append(f"row {i} ({c.label}): {problem}")
            continue
        assert qid is not None
        seen[qid] = c.label
        ids.append(qid)
    if bad:
        more = f"; ... and {len(bad) - SHOWN} more" if len(bad) > SHOWN else ""
        raise AlignmentError(f"{len(bad)} of {len(candidates)} rows of {what} do not align with locomo10.json "
                             f"({data.version}): {'; '.join(bad[:SHOWN])}{more}")
    return ids
