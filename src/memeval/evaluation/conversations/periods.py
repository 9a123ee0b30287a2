"""The days a LoCoMo answer (or gold answer) names, as intervals: grounding version 2's dates.

Version 1 compared anchor dates with a week's tolerance, so "the week before 16 June 2023" stood
for "the week before 9 June 2023" and "winter 2023" for "summer 2023" (both say 2023). Here each
expression becomes the days it means and two expressions agree when their days overlap:

- relative: "the week before D" (the 7 days before D), "the weekend after D", "the Friday before
  D" (the last Friday before D), "two weekends before D", "the day after D";
- part of a month: "early / mid / late June 2023" (days 1-10, 11-20, 21-end), "the end of May
  2023", "the first / last week of May 2023";
- a season of a year ("summer 2022": June-August; winter: December before to February and the
  December of that year);
- any other full date (that day) or month and year (the month).

Version 5 (grounding version 5) also reads "a few / several days before D" as the days 1 to 6
before D (version 2 read "a few" as one day), and a range of days ("May 21-23, 2023", "21 to 23
May 2023") as those days (version 2 read its last day only, or nothing).

An answer agrees when its days overlap the gold's and it is no vaguer: at most a week wide or as
wide as the gold ("late June 2023" fits "June 2023"; a day fits a week), or holding the whole
gold with at most three days to spare ("the start of June" for "the first week of June"). So
"mid-October 2023" does not state "19 October 2023", nor a season a month (see `agree`).
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

from ..answer_text import DateMention, find_dates
from .behaviour import ConversationGrounding

Interval = tuple[date, date]
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_COUNT = {"a": 1, "one": 1, "two": 2, "three": 3, "a couple of": 2, "couple of": 2}
_RELATIVE = re.compile(
    r"\b(?:(a couple of|couple of|two|three|one|a)\s+)?(weekends?|weeks?|days?|" + "|".join(_WEEKDAYS)
    + r")\s+(before|after|prior to)\s*$", re.I)
_MONTHS = "|".join(m for m in calendar.month_name if m) + "|" + "|".join(m for m in calendar.month_abbr if m)
_PART = re.compile(rf"\b(early|mid|late|end of|the end of|beginning of|start of|first week of|second week of|"
                   rf"third week of|last week of)[\s-]+(?:of\s+)?({_MONTHS})\.?,?\s+(\d{{4}})\b", re.I)
_SEASON = re.compile(r"\b(spring|summer|autumn|fall|winter)\s+(?:of\s+)?(\d{4})\b", re.I)
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11)}


def _month_of(name: str) -> int:
    name = name[:3].lower()
    return next(i for i in range(1, 13) if calendar.month_abbr[i].lower() == name)


def _last_day(year: int, month: int) -> int:
    return calendar.monthrange(year, month)[1]


def _relative(count: int, unit: str, direction: str, anchor: date) -> Interval:
    unit = unit.lower().rstrip("s") if unit.lower() not in _WEEKDAYS else unit.lower()
    sign = -1 if direction.lower() in ("before", "prior to") else 1
    if unit == "day":
        d = anchor + timedelta(days=sign * count)
        return d, d
    if unit == "week":
        far, near = anchor + timedelta(days=sign * 7 * count), anchor + timedelta(days=sign * (7 * count - 6))
        return (far, near) if sign < 0 else (near, far)
    target = 5 if unit == "weekend" else _WEEKDAYS.index(unit)
    d = anchor + timedelta(days=sign)
    while d.weekday() != target:
        d += timedelta(days=sign)
    d += timedelta(days=sign * 7 * (count - 1))
    return (d, d + timedelta(days=1)) if unit == "weekend" else (d, d)


def _part(kind: str, year: int, month: int) -> Interval:
    last = _last_day(year, month)
    kind = kind.lower().replace("the ", "")
    start, end = {"early": (1, 10), "beginning of": (1, 10), "start of": (1, 10), "mid": (11, 20),
                  "late": (21, last), "end of": (21, last), "first week of": (1, 7), "second week of": (8, 14),
                  "third week of": (15, 21), "last week of": (last - 6, last)}[kind]
    return date(year, month, start), date(year, month, end)


def _season(name: str, year: int) -> list[Interval]:
    if name.lower() == "winter":
        return [(date(year - 1, 12, 1), date(year, 2, _last_day(year, 2))), (date(year, 12, 1), date(year, 12, 31))]
    a, b = _SEASONS[name.lower()]
    return [(date(year, a, 1), date(year, b, _last_day(year, b)))]


def _overlaps(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    return any(a < span[1] and span[0] < b for a, b in spans)


_FEW = re.compile(r"\b(?:a\s+)?(few|several)\s+days\s+(before|after|prior to)\s*$", re.I)
_RANGE = re.compile(rf"\b(?:({_MONTHS})\.?\s+(\d{{1,2}})\s*(?:-|–|to)\s*(\d{{1,2}})|(\d{{1,2}})\s*(?:-|–|to)\s*(\d{{1,2}})"
                    rf"\s+({_MONTHS})\.?),?\s+(\d{{4}})\b", re.I)


def _ranges(text: str) -> list[tuple[Interval, tuple[int, int]]]:
    """Version 5: ranges of days within one month ("May 21-23, 2023", "21 to 23 May 2023")."""
    out = []
    for m in _RANGE.finditer(text):
        month = m.group(1) or m.group(6)
        first, last = (m.group(2), m.group(3)) if m.group(1) else (m.group(4), m.group(5))
        year, mo, a, b = int(m.group(7)), _month_of(month), int(first), int(last)
        if 1 <= a < b <= _last_day(year, mo):
            out.append(((date(year, mo, a), date(year, mo, b)), m.span()))
    return out


def periods(text: str, rules: ConversationGrounding | int = 2) -> tuple[list[Interval], bool]:
    """The intervals `text` names, and whether any came from a relative, part-of-month or season
    expression (a gold with none of those is compared by version 1's date rule)."""
    out: list[Interval] = []
    used: list[tuple[int, int]] = []
    rules = ConversationGrounding.of(rules)
    if rules.day_ranges:
        for interval, span in _ranges(text):
            out.append(interval)
            used.append(span)
    for m in _PART.finditer(text):
        out.append(_part(m.group(1), int(m.group(3)), _month_of(m.group(2))))
        used.append(m.span())
    for m in _SEASON.finditer(text):
        if not _overlaps(m.span(), used):
            out += _season(m.group(1), int(m.group(2)))
            used.append(m.span())
    mentions = find_dates(text)
    for d in mentions:
        if d.day is None or _overlaps(d.span, used):
            continue
        before = text[max(0, d.span[0] - 40):d.span[0]]
        few = _FEW.search(before) if rules.few_days else None
        if few:  # "a few days before D": the days 1 to 6 before (or after) it (the gold rounds a "few days ago")
            anchor, sign = date(d.year, d.month, d.day), (-1 if few.group(2).lower() != "after" else 1)
            ends = sorted((anchor + timedelta(days=sign), anchor + timedelta(days=6 * sign)))
            out.append((ends[0], ends[1]))
            used.append(d.span)
            continue
        rel = _RELATIVE.search(before)
        if rel:
            count = _COUNT.get((rel.group(1) or "a").lower(), 1)
            out.append(_relative(count, rel.group(2), rel.group(3), date(d.year, d.month, d.day)))
            used.append(d.span)
    special = bool(out)
    out += [_plain(d) for d in mentions if not _overlaps(d.span, used)]
    return out, special


def _plain(d: DateMention) -> Interval:
    if d.day is None:
        return date(d.year, d.month, 1), date(d.year, d.month, _last_day(d.year, d.month))
    return date(d.year, d.month, d.day), date(d.year, d.month, d.day)


MAX_VAGUENESS_DAYS = 7
SLACK_DAYS = 3  # "the start of June" (days 1-10) still says "the first week of June" (1-7)


def _days(i: Interval) -> int:
    return (i[1] - i[0]).days + 1


def agree(gold: list[Interval], answer: list[Interval]) -> bool:
    """Some answer interval overlaps a gold interval and is no wider than a week or that gold
    interval, or holds all of it and is at most SLACK_DAYS wider: "July 2023" fits "summer 2023",
    "late June 2023" fits "June 2023" and "the start of June 2023" fits "the first week of June
    2023"; but "summer 2023" is too vague for "July 2023", and "mid-October 2023" (ten days) for
    "19 October 2023" or "the week before 16 June 2023" (the known-wrong answers' vague kind)."""
    return any(a[0] <= g[1] and g[0] <= a[1]
               and (_days(a) <= max(MAX_VAGUENESS_DAYS, _days(g))
                    or (a[0] <= g[0] and g[1] <= a[1] and _days(a) <= _days(g) + SLACK_DAYS))
               for g in gold for a in answer)
