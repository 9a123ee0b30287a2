"""The model-free veto before a fusion judge call: two frames whose dates or participants
conflict are not one event, so the pair is never shown to the judge (no call, counted).

Why: the 0.5B judge merged 12 of 12 LoCoMo pairs and 1 of 1 EpBench pair, three of them with a
reason saying "different event", and joined a workshop on the High Line in May with a fashion
show at a museum in September. What makes an event one event (who, when) is in the frames'
own slots; a judge need not be asked what the slots already answer.

- dates: a frame's dates are its events' absolute times (ISO "2023-05-07", "2023-05", or a
  written date such as "May 11" or "7 May 2023"). A frame with no dated event takes the calendar
  dates written in its passages' text (a chapter names its day; `written_dates`). Two frames
  conflict when both have dates and no date of one lies within `days` days of a date of the
  other. A month or a year is the whole interval; a date without a year takes the other's year.
- participants: both frames name event participants and no name of one matches a name of the
  other (a shared content word counts: "Jon" matches "Jon Smith").
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Iterable, Mapping

from ..output_guard import ChunkText
from .frames import Frame

DateParts = tuple[int | None, int, int | None]  # (year or None, month, day or None)

_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MON = "(" + "|".join(_MONTHS) + ")"
_ISO = re.compile(r"\b(\d{4})-(\d{2})(?:-(\d{2}))?\b")
_MONTH_DAY = re.compile(_MON + r"\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4})\b)?", re.I)
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MON + r"\b(?:,?\s+(\d{4})\b)?", re.I)
_MONTH_YEAR = re.compile(_MON + r",?\s+(\d{4})\b", re.I)


def dates_in(text: str) -> list[DateParts]:
    """Calendar dates written in a text (ISO, "May 11, 2026", "11 May 2026", "May 2026")."""
    out: list[DateParts] = []
    for m in _ISO.finditer(text):
        month, day = int(m[2]), int(m[3]) if m[3] else None
        if 1 <= month <= 12 and (day is None or 1 <= day <= 31):
            out.append((int(m[1]), month, day))
    spans: list[tuple[int, int]] = []
    for pat, day_group, month_group in ((_MONTH_DAY, 2, 1), (_DAY_MONTH, 1, 2)):
        for m in pat.finditer(text):
            day = int(m[day_group])
            if 1 <= day <= 31:
                out.append((int(m[3]) if m[3] else None, _MONTHS[m[month_group].lower()], day))
                spans.append(m.span())
    for m in _MONTH_YEAR.finditer(text):
        if not any(s <= m.start() < e for s, e in spans):
            out.append((int(m[2]), _MONTHS[m[1].lower()], None))
    return out


def _interval(d: DateParts, year: int) -> tuple[dt.date, dt.date]:
    y, month, day = d[0] or year, d[1], d[2]
    last = calendar.monthrange(y, month)[1]
    if day is not None:
        day = min(day, last)
        return dt.date(y, month, day), dt.date(y, month, day)
    return dt.date(y, month, 1), dt.date(y, month, last)


def compatible(a: DateParts, b: DateParts, days: int) -> bool:
    """Whether two dates may name the same moment, give or take `days` days."""
    year = a[0] or b[0] or 2000  # no year on either: compare within one (leap) year
    (s1, e1), (s2, e2) = _interval(a, year), _interval(b, year)
    return max((s2 - e1).days, (s1 - e2).days, 0) <= days


def frame_dates(frame: Frame, written: Mapping[str, list[DateParts]] | None = None) -> list[DateParts]:
    """The frame's event dates, else the dates written in its passages."""
    dates = [d for e in frame.events for d in dates_in(str(e.get("time") or ""))]
    if dates or not written:
        return dates
    return [d for p in frame.provenance for d in written.get(p, [])]


def frame_people(frame: Frame) -> list[str]:
    return [str(n) for e in frame.events for n in (e.get("participants") or []) if str(n).strip()]


def _share_a_name(a: Iterable[str], b: list[str]) -> bool:
    other = ChunkText(" ; ".join(b))
    return any(other.has_name(n) for n in a)


def conflict(old: Frame, new: Frame, days: int,
             written: Mapping[str, list[DateParts]] | None = None) -> str | None:
    """"dates" or "participants" when the two frames cannot be one event, else None."""
    da, db = frame_dates(old, written), frame_dates(new, written)
    if da and db and not any(compatible(a, b, days) for a in da for b in db):
        return "dates"
    pa, pb = frame_people(old), frame_people(new)
    if pa and pb and not _share_a_name(pa, pb) and not _share_a_name(pb, pa):
        return "participants"
    return None
