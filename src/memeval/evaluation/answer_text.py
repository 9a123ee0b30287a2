"""Reading an answer's text, shared by both benchmark families' grounding checks.

Model-free: normalisation, dates in any common format (read by python-dateutil), sentence
splitting, and the sentences that decline or deny (which assert nothing). EpBench's item
grounding and the conversation benchmarks' verdict grounding both build on these, so they live
apart from either family.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime

from dateutil import parser as dateparser

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
# The patterns find where a date is written; dateutil reads each one found (month names, a slash
# date's day/month order, the calendar), as it does not search running text for several dates.
_INFO = dateparser.parserinfo()
_MONTH_NAMES = sorted({n.lower() for names in _INFO.MONTHS for n in names}, key=len, reverse=True)
_MON = r"(?:" + "|".join(_MONTH_NAMES) + r")\.?"
_ORD = r"(?:st|nd|rd|th)?"
_FULL_DATES = [
    re.compile(rf"\b{_MON}\s+\d{{1,2}}{_ORD},?\s+\d{{4}}\b", re.I),
    re.compile(rf"\b\d{{1,2}}{_ORD}\s+(?:of\s+)?{_MON},?\s+\d{{4}}\b", re.I),
    re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b"),
    re.compile(r"\b\d{1,2}[/.]\d{1,2}[/.]\d{4}\b"),
]
_MONTH_YEAR = re.compile(rf"\b{_MON},?\s+\d{{4}}\b", re.I)
_NO_DAY = datetime(2000, 1, 1)  # what dateutil fills in for a month-year mention (then dropped)


@dataclass(frozen=True)
class DateMention:
    year: int
    month: int
    day: int | None  # None: only month and year were given
    span: tuple[int, int]

    @property
    def key(self) -> str:
        return f"{self.year:04d}-{self.month:02d}" + (f"-{self.day:02d}" if self.day else "")


def _read(m: re.Match[str], with_day: bool) -> DateMention | None:
    """The date a pattern found, or None when it names no calendar day (month 13, 30 February)."""
    try:
        when = dateparser.parse(m.group(0), parserinfo=_INFO, default=_NO_DAY)
    except (ValueError, OverflowError):
        return None
    if not 1000 <= when.year <= 2999:
        return None
    return DateMention(when.year, when.month, when.day if with_day else None, m.span())


def find_dates(text: str) -> list[DateMention]:
    """Every full date in any common format, then month-year mentions not inside a full date.

    Slash dates read month first (the story is set in the US) unless the first number exceeds 12.
    """
    found: list[DateMention] = []
    for pattern, with_day in [(p, True) for p in _FULL_DATES] + [(_MONTH_YEAR, False)]:
        for m in pattern.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in (d.span for d in found)):
                continue
            date = _read(m, with_day)
            if date is not None:
                found.append(date)
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
