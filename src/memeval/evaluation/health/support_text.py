"""The support scorer: which content of a claim its source text does not hold.

A claim (a stored fact, memory, summary line, frame slot, graph edge or context sentence) is
read as content items: content words (NLTK's English stopword list, as bm25s ships it, left out;
the rest stemmed with NLTK's Snowball stemmer, so "started" matches "starts"), numbers (number
words one to twenty read as digits), times of day ("9 am", "4:04 pm") and dates. Dates are the
days they mean (evaluation/conversations/periods.py: "27 May 2023" and "May 27, 2023" are one
day, "the week before 9 June 2023" seven days), and a claim's date is held when the source names
a day within `date_window` days of it: a memory that writes "yesterday" as a date is not an
invention. An item the source does not hold is unsupported; a claim is unsupported when their
share passes the threshold (conf/health/default.yaml `support`).

Model-free and cheap: a source is a set of stems, numbers, times and days, built once per corpus
(or per unit, where a method records which units a claim came from).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

from bm25s.stopwords import STOPWORDS_EN_PLUS  # NLTK's English stopword list (179 words)
from nltk.stem.snowball import SnowballStemmer

from ..answer_text import find_dates
from ..conversations.periods import periods

_stemmer = SnowballStemmer("english")
STOPWORDS = frozenset(STOPWORDS_EN_PLUS)
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
_TIME = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s?m\b\.?", re.I)
_NUMBER = re.compile(r"(?<![A-Za-z])\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    return _stemmer.stem(word)


def _word_key(word: str) -> str | None:
    """A word's content key (its stem, or a number word's digits), None for a stopword."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if w in _NUMBER_WORDS:
        return "#" + _NUMBER_WORDS[w]
    if w in STOPWORDS or len(w) < 2 or "'" in w:
        return None
    return stem(w)


def _blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


@dataclass(frozen=True)
class Content:
    """A text's content items: word stems (and '#n' numbers) with the words they came from, times
    of day, and the intervals of days its dates mean."""

    words: dict[str, str]  # key -> the first surface form
    times: frozenset[str]
    days: tuple[tuple[date, date], ...]

    @property
    def size(self) -> int:
        return len(self.words) + len(self.times) + len(self.days)


@lru_cache(maxsize=100_000)
def content(text: str) -> Content:
    """The claim's content items (dates and times read first, then cut out of the words)."""
    intervals, _ = periods(text, rules=5)
    spans = [d.span for d in find_dates(text)]
    times = set()
    for m in _TIME.finditer(text):
        times.add(f"{int(m.group(1))}:{m.group(2) or '00'}{m.group(3).lower()}m")
        spans.append(m.span())
    rest = _blank(text, spans)
    words: dict[str, str] = {}
    for m in _NUMBER.finditer(rest):
        words.setdefault("#" + m.group().replace(",", "").lstrip("0") or "0", m.group())
    for m in _WORD.finditer(_NUMBER.sub(" ", rest)):
        key = _word_key(m.group())
        if key is not None:
            words.setdefault(key, m.group())
    return Content(words, frozenset(times), tuple(sorted(set(intervals))))


class Source:
    """What some source text holds: its word keys, times of day and days (the days its dates
    name, one interval per mention)."""

    def __init__(self, texts: Iterable[str]):
        self.words: set[str] = set()
        self.times: set[str] = set()
        days: set[date] = set()
        for text in texts:
            c = content(text) if len(text) < 2000 else _content_long(text)
            self.words |= c.words.keys()
            self.times |= c.times
            for a, b in c.days:
                if (b - a).days <= 31:
                    days.update(a + timedelta(days=i) for i in range((b - a).days + 1))
        self.days = frozenset(days)

    def holds_days(self, interval: tuple[date, date], window: int) -> bool:
        a, b = interval
        if not self.days:
            return False
        lo, hi = a - timedelta(days=window), b + timedelta(days=window)
        return any(lo <= d <= hi for d in self.days)


def _content_long(text: str) -> Content:
    """A long source text read paragraph by paragraph (the cache keeps short texts only)."""
    words: dict[str, str] = {}
    times: set[str] = set()
    days: set[tuple[date, date]] = set()
    for part in text.split("\n"):
        c = content(part) if len(part) < 2000 else _content_raw(part)
        words.update(c.words)
        times |= c.times
        days.update(c.days)
    return Content(words, frozenset(times), tuple(days))


def _content_raw(text: str) -> Content:
    return content.__wrapped__(text)


def missing(claim: str, source: Source, date_window: int = 7) -> tuple[list[str], int]:
    """The claim's content items the source does not hold (as written), and how many it has."""
    c = content(claim)
    out = [w for k, w in c.words.items() if k not in source.words]
    out += [t for t in sorted(c.times) if t not in source.times]
    out += [f"{a:%Y-%m-%d}" + ("" if a == b else f"..{b:%Y-%m-%d}")
            for a, b in c.days if not source.holds_days((a, b), date_window)]
    return out, c.size


def unsupported_share(claim: str, source: Source, date_window: int = 7) -> tuple[float | None, list[str]]:
    """(share of the claim's content items the source does not hold, those items); None for a
    claim without content."""
    out, size = missing(claim, source, date_window)
    return (round(len(out) / size, 4) if size else None), out
