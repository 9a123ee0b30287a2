"""Names in an answer that no known value accounts for: people the answer invents.

Shared by the matcher (an invented person is a claimed item) and grounding version 2 (a chapter
account that brings in someone else invented the chapter's cast).
"""

from __future__ import annotations

import re

from ..answer_text import normalize, wordset
from .grounding import phrase_in
from .universe import Universe

_NAME = re.compile(r"(?=\b([A-Z][a-z]+(?:-[A-Z][a-z]+)?) ([A-Z][a-z]+(?:-[A-Z][a-z]+)?)\b)")
_NOT_NAME = wordset(
    "the a an in on at of and or but during after before based chapter chapters material story "
    "event events then also both while when where this that these there their they he she his her "
    "january february march april may june july august september october november december monday "
    "tuesday wednesday thursday friday saturday sunday new york city park museum center centre "
    "street island bridge building hall square garden gardens beach festival night show exhibition "
    "workshop performance tournament fair state national cultural church cathedral tower library "
    "i list sorry unfortunately however answer none no yes ms mr mrs dr miss sir besides apart aside "
    "except only other others plus with joined including along first then finally later")


def unknown_people(text: str, question: str, known_found: list[str], universe: Universe) -> list[str]:
    """Capitalised First Last pairs that are no known person, place, event or cue: invented people."""
    masked = text
    for v in sorted(universe.people | set(known_found), key=len, reverse=True):
        masked = re.sub(re.escape(v), " ; ", masked, flags=re.I)  # known names are no candidates
    others = universe.locations | universe.event_types
    out: list[str] = []
    for m in _NAME.finditer(masked):
        name = f"{m.group(1)} {m.group(2)}"
        if {m.group(1).lower(), m.group(2).lower()} & _NOT_NAME:
            continue
        if any(phrase_in(name, v, fuzzy=False) for v in others) or any(phrase_in(v, name) for v in known_found):
            continue
        if phrase_in(name, question, fuzzy=False) or normalize(name) in {normalize(x) for x in out}:
            continue
        out.append(name)
    return out
