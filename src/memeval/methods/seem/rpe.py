"""Reverse Provenance Expansion and the context layout.

Every passage behind each retrieved frame joins the context. The dataset's cap applies to
these expanded passages: they are taken in the rank of the frame that brought them (a frame's
own passages in corpus order), a passage from a unit beyond the unit cap is dropped, and when
the rendered context exceeds the token cap the lowest-ranked kept passages go first. Every drop
is returned (and recorded in the prediction). Facts are shown only from kept passages; a frame
is shown when one of its passages is kept (`frame_sources: any_kept`, the first setting) or only
when all are (`all_kept`): a fused frame speaks for every passage it was merged from, so with
`any_kept` text from a passage dropped at the cap could reach the answering model through it
(the harness's cap audit found it: 19 of 105 LoCoMo contexts). `frame_dates: spoken` writes the
extractor's ISO dates in frames and facts as "7 May 2023" (the answerer copies the form it sees);
source passages are never rewritten.

Layout (stable; `render_context`):

    ## Source passages (in passage order)
    ### <unit title or "Session <id>"> (<date>)[, turns a-b]
    <passage text>
    ...
    ## Event frames (by retrieval rank)
    [F7] from: <passage id> (<its date>), ...
    <summary>
    - <participants>; <action>; <time (raw time)>; at <location>; because <reason>; by <method>
    ## Facts (subject | predicate | object | time) [passage]
    - <s> | <p> | <o> | <time> [<passage id>]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memeval.datasets.types import ContextCap, Corpus

from ..base import unit_block
from .frames import Frame, Passage, event_line


@dataclass
class Expansion:
    kept: list[str] = field(default_factory=list)            # passage ids, in rank order
    dropped: list[dict[str, Any]] = field(default_factory=list)
    brought_by: dict[str, str] = field(default_factory=dict)  # passage id -> frame id


def expand(frames: list[Frame], passages: dict[str, Passage], max_units: int | None) -> Expansion:
    """The passages of the ranked frames under the unit cap (highest-ranked first)."""
    out = Expansion()
    units: set[str] = set()
    for f in frames:
        for pid in sorted(f.provenance, key=lambda p: passages[p].order if p in passages else 1 << 30):
            if pid in out.brought_by or pid not in passages:
                continue
            out.brought_by[pid] = f.id
            unit = passages[pid].unit_id
            if max_units is not None and unit not in units and len(units) >= max_units:
                out.dropped.append({"passage": pid, "unit": unit, "frame": f.id, "reason": "unit_cap"})
                continue
            units.add(unit)
            out.kept.append(pid)
    return out


def passage_block(corpus: Corpus, p: Passage) -> str:
    head = unit_block(corpus, p.unit_id, "").rstrip("\n")
    return f"{head}{', ' + p.label if p.label else ''}\n{p.text}"


FRAME_SOURCES = ("any_kept", "all_kept")
FRAME_DATES = ("as_extracted", "spoken")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
_ISO = re.compile(r"\b(\d{4})-(\d{2})(?:-(\d{2}))?\b")


def spoken_dates(text: str) -> str:
    """ISO dates written as people write them: 2023-05-07 -> 7 May 2023, 2023-05 -> May 2023.
    Anything that is not a calendar date (month 13, day 00) is left as it is."""
    def one(m: re.Match[str]) -> str:
        year, month, day = m.group(1), int(m.group(2)), m.group(3)
        if not 1 <= month <= 12 or (day is not None and not 1 <= int(day) <= 31):
            return m.group(0)
        return f"{int(day)} {_MONTHS[month - 1]} {year}" if day else f"{_MONTHS[month - 1]} {year}"
    return _ISO.sub(one, text)


def shown_frames(chosen: list[Frame], kept: set[str], frame_sources: str) -> list[Frame]:
    """The retrieved frames the context may show, given the passages kept under the cap."""
    if frame_sources == "all_kept":
        return [f for f in chosen if f.provenance and set(f.provenance) <= kept]
    return [f for f in chosen if kept & set(f.provenance)]


def frame_block(f: Frame, dates: dict[str, str | None] | None = None) -> str:
    """A frame with its provenance (and each passage's date when known)."""
    src = [f"{p} ({dates[p]})" if dates and dates.get(p) else p for p in f.provenance]
    lines = [f"[{f.id}] from: {', '.join(src)}", f.summary]
    lines += ["- " + event_line(e) for e in f.events]
    return "\n".join(x for x in lines if x)


def fact_line(f: dict[str, Any]) -> str:
    return f"- {f['subject']} | {f['predicate']} | {f['object']} | {f.get('time') or '-'} [{f['passage']}]"


def render_context(corpus: Corpus, passages: list[Passage], frames: list[Frame],
                   facts: list[dict[str, Any]], all_passages: list[Passage] | None = None,
                   frame_dates: str = "as_extracted") -> str:
    """The context in the layout above; `all_passages` lends frames their passages' dates."""
    derived = spoken_dates if frame_dates == "spoken" else (lambda t: t)
    parts = []
    if passages:
        parts.append("## Source passages (in passage order)\n\n"
                     + "\n\n".join(passage_block(corpus, p) for p in sorted(passages, key=lambda p: p.order)))
    if frames:
        dates = {p.id: p.date for p in all_passages} if all_passages else None
        parts.append("## Event frames (by retrieval rank)\n"
                     + "\n\n".join(derived(frame_block(f, dates)) for f in frames))
    if facts:
        parts.append("## Facts (subject | predicate | object | time) [passage]\n"
                     + "\n".join(derived(fact_line(f)) for f in facts))
    return "\n\n".join(parts)


def fit_tokens(cap: ContextCap, exp: Expansion, build: Callable[[list[str]], tuple[str, list[Frame], list]],
               count: Callable[[str], int]) -> tuple[str, list[Frame], list]:
    """Drop the lowest-ranked kept passages until the rendered context fits the token cap.
    `build(kept)` renders the context (and the frames and facts it shows) for a passage list."""
    text, frames, facts = build(exp.kept)
    while cap.max_tokens is not None and count(text) > cap.max_tokens and exp.kept:
        pid = exp.kept.pop()
        exp.dropped.append({"passage": pid, "frame": exp.brought_by.get(pid), "reason": "token_cap"})
        text, frames, facts = build(exp.kept)
    return text, frames, facts
