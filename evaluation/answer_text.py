"""Reading an answer's text, shared by both benchmark families' grounding checks.

Model-free: normalisation, dates in any common format, sentence splitting, and the sentences
that decline or deny (which assert nothing). EpBench's item grounding and the conversation
benchmarks' verdict grounding both build on these, so they live apart from either family.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# -- normalisation ---------------------------------------------------------------------------
_ABBREV = re.compile(r"\b(St|Mt|Mr|Mrs|Ms|Dr|Jr|Sr|Ft|Ave)\.", re.I)


def normalize(text: str) -> str:
    """Lowercase ASCII words separated by single spaces; apostrophes joined, a leading 'the' dropped."""
    t = unicodedata.normalize("NFKD", text)
    t = "".join(c for c in t if not unicodedata.combining(c)).lower()
    t = t.replace("&", " and ").replace("\u2019", "'")
    t = re.sub(r"(\w)'(\w)", r"\1\2", t)
    t = re.sub(r"[^a-z0-9]+", " ", t).strip()
    return re.sub(r"^the ", "", t)


def tokens(text: str) -> list[str]:
    return normalize(text).split()


# -- dates -----------------------------------------------------------------------------------
_MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9,
    "sept": 9, "sep": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}
_MON = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_ORD = r"(?:st|nd|rd|th)?"
_DATE_PATTERNS = [
    re.compile(rf"\b{_MON}\s+(?P<d>\d{{1,2}}){_ORD},?\s+(?P<y>\d{{4}})\b", re.I),
    re.compile(rf"\b(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?{_MON},?\s+(?P<y>\d{{4}})\b", re.I),
    re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b"),
    re.compile(r"\b(?P<a>\d{1,2})[/.](?P<b>\d{1,2})[/.](?P<y>\d{4})\b"),
]
_MONTH_YEAR = re.compile(rf"\b{_MON},?\s+(?P<y>\d{{4}})\b", re.I)


@dataclass(frozen=True)
class DateMention:
    year: int
    month: int
    day: int | None  # None: only month and year were given
    span: tuple[int, int]

    @property
    def key(self) -> str:
        return f"{self.year:04d}-{self.month:02d}" + (f"-{self.day:02d}" if self.day else "")


def _valid(y: int, m: int, d: int | None) -> bool:
    return 1 <= m <= 12 and (d is None or 1 <= d <= 31) and 1000 <= y <= 2999


def find_dates(text: str) -> list[DateMention]:
    """Every full date in any common format, then month-year mentions not inside a full date.

    Slash dates read month first (the story is set in the US) unless the first number exceeds 12.
    """
    found: list[DateMention] = []
    taken: list[tuple[int, int]] = []
    for pat in _DATE_PATTERNS:
        for m in pat.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            g = m.groupdict()
            y = int(g["y"])
            if g.get("mon"):
                mo, d = _MONTHS[g["mon"].lower().rstrip(".")], int(g["d"])
            elif g.get("m"):
                mo, d = int(g["m"]), int(g["d"])
            else:
                a, b = int(g["a"]), int(g["b"])
                mo, d = (b, a) if a > 12 else (a, b)
            if _valid(y, mo, d):
                found.append(DateMention(y, mo, d, m.span()))
                taken.append(m.span())
    for m in _MONTH_YEAR.finditer(text):
        if any(a < m.end() and m.start() < b for a, b in taken):
            continue
        y, mo = int(m.group("y")), _MONTHS[m.group("mon").lower().rstrip(".")]
        if _valid(y, mo, None):
            found.append(DateMention(y, mo, None, m.span()))
    return sorted(found, key=lambda d: d.span)


def parse_date(item: str) -> DateMention | None:
    """The date an item names when the item is essentially just a date, else None."""
    dates = find_dates(item)
    if len(dates) != 1:
        return None
    a, b = dates[0].span
    rest = normalize(item[:a] + " " + item[b:])
    return dates[0] if len(rest.split()) <= 2 else None


# -- sentences that assert nothing -----------------------------------------------------------
REFUSAL = re.compile(
    r"\b(cannot|can ?not|can't|unable to|could not|couldn't|i do not know|i don't know|not sure|"
    r"not (?:mentioned|found|provided|specified|available|stated|given|present|included|described|"
    r"recorded|listed|enough|possible|clear)|"
    r"no (?:information|mention|record|details|data|events?|dates?|locations?|places?|protagonists?|"
    r"people|one|other|specific|relevant|such|further|additional|indication)|nobody|no one|"
    r"(?:does|do|did)(?: not|n't) (?:contain|mention|provide|specify|say|include|describe|state|"
    r"appear|show|refer|list|involve)|there (?:is|are|were|was) no|none (?:of|are|were|is|was)|"
    r"insufficient|lacks?|sorry|apologi[sz]e)\b", re.I)
EXCEPTION = re.compile(r"\b(other than|besides|except|apart from|aside from|only)\b", re.I)
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+|;\s*|,\s*(?=but\b|however\b|although\b)|\s+-\s+")


def sentences(answer: str) -> list[str]:
    """Split an answer into sentences and list lines; abbreviation dots do not end a sentence."""
    text = _ABBREV.sub(lambda m: m.group(1), answer)
    return [s.strip(" *-\t•") for s in _SPLIT.split(text) if s and s.strip(" *-\t•")]


def is_refusal_sentence(sentence: str) -> bool:
    return bool(REFUSAL.search(sentence)) and not EXCEPTION.search(sentence)


def wordset(text: str) -> frozenset[str]:
    """A set of words written as one string, for readable word lists."""
    return frozenset(text.split())
