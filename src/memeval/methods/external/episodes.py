"""Units as dated episodes, for the memory packages that ingest a conversation in time order.

Graphiti and cognee take each session (or chapter) with the time it happened: Graphiti resolves
relative dates ("last week") against an episode's reference time and orders its facts by it.
The datasets write dates in their own formats (LoCoMo "1:56 pm on 8 May, 2023", LongMemEval
"2023/05/20 (Sat) 02:21"). A unit without a timestamp (an EpBench chapter) takes the first date
its text writes out ("On September 22, 2026, ..."; `dates="text"`, every chapter of EpBench-20
has one), else a fixed synthetic time, one day per position after 2000-01-01, so the order holds
and the prompts (which show these times) are the same on every run: never the clock, which would
break every cache hit. `dates="synthetic"` is the rule before text dates (saved runs keep it).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from memeval.datasets.types import Corpus, Unit

from .base import unit_payload

SYNTHETIC_START = datetime(2000, 1, 1, tzinfo=UTC)
_FORMATS = (
    "%I:%M %p on %d %B, %Y",  # LoCoMo: 1:56 pm on 8 May, 2023
    "%I:%M %p on %d %b, %Y",
    "%Y/%m/%d %H:%M",  # LongMemEval, once its weekday is removed
    "%Y-%m-%dT%H:%M:%S",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%d",
    "%d %B %Y",
    "%B %d, %Y",
)
_WEEKDAY = re.compile(r"\s*\((?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*\)\s*")
_SPEAKER_LINE = re.compile(r"^[^\s:][^:\n]{0,40}: ")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December")
_MONTHS = {m.lower(): i for i, m in enumerate(_MONTH_NAMES, 1)}
_MONTH = r"(?P<month>" + "|".join(_MONTH_NAMES) + ")"
_DAY_MONTH_YEAR = re.compile(r"\b(?P<day>\d{1,2}) " + _MONTH + r",? (?P<year>\d{4})\b", re.I)
_MONTH_DAY_YEAR = re.compile(r"\b" + _MONTH + r" (?P<day>\d{1,2}),? (?P<year>\d{4})\b", re.I)
_NUMERIC = re.compile(r"\b(?P<year>\d{4})[/-](?P<month>\d{1,2})[/-](?P<day>\d{1,2})\b")
DATE_RULES = ("text", "synthetic")


def parse_time(text: str | None) -> datetime | None:
    """The unit's own timestamp as an aware UTC datetime, or None when it has none we can read."""
    if not text:
        return None
    cleaned = _WEEKDAY.sub(" ", text.strip()).strip()
    cleaned = re.sub(r"\s+", " ", cleaned)
    for fmt in _FORMATS:
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    try:
        parsed = datetime.fromisoformat(cleaned)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def iso_date(text: str | None) -> str | None:
    """The first full date in `text` as YYYY-MM-DD ('8 May, 2023', 'May 08, 2024', '2023/05/20')."""
    if not text:
        return None
    found = []
    for rx in (_NUMERIC, _DAY_MONTH_YEAR, _MONTH_DAY_YEAR):
        m = rx.search(text)
        if m:
            month = m.group("month")
            month_n = int(month) if month.isdigit() else _MONTHS[month.lower()]
            day, year = int(m.group("day")), int(m.group("year"))
            if 1 <= month_n <= 12 and 1 <= day <= 31:
                found.append((m.start(), f"{year:04d}-{month_n:02d}-{day:02d}"))
    return min(found)[1] if found else None


def text_date(text: str) -> datetime | None:
    """The first full date the text writes (iso_date), at midnight UTC, or None (also for one
    that is no calendar day, "February 30, 2024"): a story's own date line, never a relative
    phrase ("last week") or a bare year."""
    found = iso_date(text)
    try:
        return datetime.strptime(found, "%Y-%m-%d").replace(tzinfo=UTC) if found else None
    except ValueError:
        return None


def date_rule(dates: str) -> str:
    """`dates` if it is one of DATE_RULES (a method checks it when built, before any call)."""
    if dates not in DATE_RULES:
        raise ValueError(f"episode_dates must be one of {DATE_RULES}, not {dates!r}")
    return dates


def reference_time(unit: Unit, dates: str = "text") -> tuple[datetime, str]:
    """(when the unit happened, where that came from: 'unit', 'text' or 'synthetic')."""
    date_rule(dates)
    parsed = parse_time(unit.timestamp)
    if parsed is not None:
        return parsed, "unit"
    written = text_date(unit.text) if dates == "text" else None
    if written is not None:
        return written, "text"
    return SYNTHETIC_START + timedelta(days=unit.position), "synthetic"


def is_dialogue(corpus: Corpus) -> bool:
    """True when every unit opens with a 'Speaker: ' turn (LoCoMo, LongMemEval sessions; a
    LongMemEval assistant turn may run over several paragraphs, so only the opening is read)."""
    return bool(corpus.units) and all(_SPEAKER_LINE.match(u.text.lstrip()) for u in corpus.units)


def dated_payload(corpus: Corpus, dates: str = "text") -> list[dict[str, Any]]:
    """unit_payload plus each unit's ISO reference time and its source, in corpus order (a cheap
    real run over a conversation's start cuts the corpus itself: subset.index_units)."""
    out = []
    for row, unit in zip(unit_payload(corpus), corpus.units, strict=True):
        when, source = reference_time(unit, dates)
        out.append({**row, "reference_time": when.isoformat(), "time_source": source})
    return out
