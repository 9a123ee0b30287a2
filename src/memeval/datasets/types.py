"""Canonical records every method and scorer sees: corpora of ordered units, and questions.

A unit is a chapter (EpBench) or a dated session (LoCoMo, LongMemEval). Questions point at the
corpus they are asked about, so one dataset may hold one book or one haystack per question.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Unit:
    id: str
    text: str
    position: int
    timestamp: str | None = None
    title: str | None = None


@dataclass(frozen=True)
class Corpus:
    id: str
    units: tuple[Unit, ...]

    def unit(self, unit_id: str) -> Unit:
        for u in self.units:
            if u.id == unit_id:
                return u
        raise KeyError(f"corpus {self.id!r} has no unit {unit_id!r}")


@dataclass(frozen=True)
class Question:
    id: str
    corpus_id: str
    text: str
    gold: tuple[str, ...]
    gold_units: tuple[str, ...] = ()
    attrs: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def record(self) -> dict[str, Any]:
        """The question as stored next to its predictions (JSON-friendly)."""
        return {"question_id": self.id, "corpus_id": self.corpus_id, "question": self.text,
                "gold": list(self.gold), "gold_units": list(self.gold_units), **self.attrs}


@dataclass(frozen=True)
class ContextCap:
    """How much material a method may put in the answer context (units and/or tokens)."""

    max_units: int | None = None
    max_tokens: int | None = None
    source: str | None = None  # where the numbers come from, e.g. "dataset config" or "data maximum"

    def describe(self) -> str:
        parts = []
        if self.max_units is not None:
            parts.append(f"{self.max_units} units")
        if self.max_tokens is not None:
            parts.append(f"{self.max_tokens} tokens")
        text = " and ".join(parts) or "uncapped"
        return f"{text} ({self.source})" if self.source and parts else text


@dataclass(frozen=True)
class GoldAudit:
    """Questions whose gold answer a published audit flags, so a score can be given without them.

    `available` False: the dataset has an audit but its file is not in the data folder (a score
    then says the split is missing rather than silently giving none)."""

    source: str  # the file under the data folder, with its sha256 prefix
    rule: str  # which rows count as flagged
    flagged: dict[str, str]  # question id -> why (the audits' labels)
    available: bool = True


@dataclass
class Dataset:
    name: str
    version: str
    corpora: dict[str, Corpus]
    questions: list[Question]
    natural_cap: ContextCap
    strata_key: str
    notes: list[str] = field(default_factory=list)
    group_keys: list[str] = field(default_factory=list)  # per-group tables; empty = [strata_key]
    gold_audit: GoldAudit | None = None  # None: no audit of this dataset's gold exists

    def corpus_for(self, q: Question) -> Corpus:
        return self.corpora[q.corpus_id]
