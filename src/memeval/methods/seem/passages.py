"""Passages: what one frame call reads.

A passage is a unit (chapter or session) by default. Two ways to cut a long unit, both part
of the index identity:
- `window_turns: N` (the first setting): windows of N paragraphs (non-empty lines) of any unit,
  chapters included; the last window holds what is left.
- `passage_turns: N`: a conversation session becomes windows of at most N speaker turns, of
  near-equal size; a unit that is not a conversation (a chapter) stays whole. The SEEM paper
  fuses "fragmented interaction turns", which implies passages of a few turns; whole sessions
  (LoCoMo: 14-28 turns) hide most of a session's events from a small model's five-event frame.
  A turn is a "Speaker: ..." line with the lines that follow it up to the next speaker line
  (a LongMemEval reply may span several lines).
`max_passages: N` keeps the first N passages (`subset.index_units=N` cuts the corpus to N units
for every method before SEEM sees it).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass

from memeval.datasets.types import Corpus, Unit

from ..embedding_rag import paragraphs

# "Gina: ...", "Mira Tolk: ...", "user: ...": a capitalised name of up to four words, or a chat role
_SPEAKER = re.compile(r"^(?:[A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,3}|user|assistant|system): ")


@dataclass(frozen=True)
class Passage:
    id: str            # the unit id, or "<unit id>#w<k>" for the k-th window of a unit
    unit_id: str
    order: int         # position in the corpus, windows in order
    date: str | None
    text: str
    label: str = ""    # "turns 9-16" for a window

    @property
    def key(self) -> str:
        """Content address of (date, text): the extraction saw this date."""
        return hashlib.sha256(f"{self.date or ''}\x00{self.text}".encode()).hexdigest()[:20]

    @property
    def text_key(self) -> str:
        """Content address of the text alone: one session repeated in many haystacks under
        different dates (LongMemEval-S) shares one date-free extraction."""
        return "t" + hashlib.sha256(self.text.encode()).hexdigest()[:19]


def speaker_turns(text: str) -> list[str] | None:
    """The turns of a conversation session, or None when the text is not one (its first line
    is not a speaker line, or it has fewer than two)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or not _SPEAKER.match(lines[0]):
        return None
    turns: list[list[str]] = []
    for line in lines:
        if _SPEAKER.match(line):
            turns.append([line.strip()])
        else:
            turns[-1].append(line.strip())
    return ["\n".join(t) for t in turns] if len(turns) >= 2 else None


def balanced(n: int, size: int) -> list[tuple[int, int]]:
    """[start, end) of ceil(n / size) consecutive windows of near-equal length (each <= size)."""
    k = math.ceil(n / size)
    base, extra = divmod(n, k)
    out, start = [], 0
    for i in range(k):
        end = start + base + (1 if i < extra else 0)
        out.append((start, end))
        start = end
    return out


def _windows(u: Unit, window_turns: int | None, passage_turns: int | None) -> list[tuple[str, str]]:
    """(text, label) of each passage of one unit."""
    if window_turns:
        paras = paragraphs(u.text)
        if len(paras) > window_turns:
            return [("\n\n".join(paras[s:s + window_turns]), f"turns {s + 1}-{min(s + window_turns, len(paras))}")
                    for s in range(0, len(paras), window_turns)]
    if passage_turns:
        turns = speaker_turns(u.text)
        if turns is not None and len(turns) > passage_turns:
            return [("\n\n".join(turns[s:e]), f"turns {s + 1}-{e}") for s, e in balanced(len(turns), passage_turns)]
    return [(u.text, "")]


def split_passages(corpus: Corpus, window_turns: int | None = None, max_passages: int | None = None,
                   passage_turns: int | None = None) -> list[Passage]:
    """Passages in corpus order (see the module docstring)."""
    for name, value in (("window_turns", window_turns), ("passage_turns", passage_turns)):
        if value is not None and value < 1:
            raise ValueError(f"seem {name} must be null or >= 1")
    if window_turns and passage_turns:
        raise ValueError("seem window_turns and passage_turns cut passages two ways: set one of them")
    units = sorted(corpus.units, key=lambda x: x.position)
    out: list[Passage] = []
    for u in units:
        parts = _windows(u, window_turns, passage_turns)
        if len(parts) == 1:
            out.append(Passage(u.id, u.id, len(out), u.timestamp, u.text))
            continue
        for k, (text, label) in enumerate(parts, start=1):
            out.append(Passage(f"{u.id}#w{k}", u.id, len(out), u.timestamp, text, label))
    return out[:max_passages] if max_passages else out
