"""Units as dated episodes, for the memory packages that ingest a conversation in time order.

Graphiti and cognee take each session (or chapter) with the time it happened: Graphiti resolves
relative dates ("last week") against an episode's reference time and orders its facts by it.
The datasets write dates in their own formats (LoCoMo "1:56 pm on 8 May, 2023", LongMemEval
"2023/05/20 (Sat) 02:21"); an undated unit (an EpBench chapter) gets a fixed synthetic time, one
day per position after 2000-01-01, so the order holds and the prompts (which show these times)
are the same on every run: never the clock, which would break every cache hit.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from datasets.types import Corpus, Unit

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


def reference_time(unit: Unit) -> tuple[datetime, str]:
    """(when the unit happened, where that came from: 'unit' or 'synthetic')."""
    parsed = parse_time(unit.timestamp)
    if parsed is not None:
        return parsed, "unit"
    return SYNTHETIC_START + timedelta(days=unit.position), "synthetic"


def is_dialogue(corpus: Corpus) -> bool:
    """True when every unit opens with a 'Speaker: ' turn (LoCoMo, LongMemEval sessions; a
    LongMemEval assistant turn may run over several paragraphs, so only the opening is read)."""
    return bool(corpus.units) and all(_SPEAKER_LINE.match(u.text.lstrip()) for u in corpus.units)


def dated_payload(corpus: Corpus) -> list[dict[str, Any]]:
    """unit_payload plus each unit's ISO reference time and its source, in corpus order (a cheap
    real run over a conversation's start cuts the corpus itself: subset.index_units)."""
    out = []
    for row, unit in zip(unit_payload(corpus), corpus.units, strict=True):
        when, source = reference_time(unit)
        out.append({**row, "reference_time": when.isoformat(), "time_source": source})
    return out
