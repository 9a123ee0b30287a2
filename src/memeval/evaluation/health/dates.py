"""The unit-dates check: contexts that name dated units but show none of their dates.

A conversation's session is dated in its header, not in its turns ("Session 1 (4:04 pm on 20
January, 2023)"). An adapter that hands a package the turns without the header, or a memory
that keeps what was said and drops when, leaves every temporal question unanswerable, and the
run still reports a temporal score. GraphRAG's LoCoMo contexts before `unit_titles` (text units
without their session's title) and v1's GSW entity summaries showed none of 105 contexts' dates.

A context counts as dated when a date written in it (day, month and year in any of the usual
orders, or ISO and slashed forms) is the date of one of the units it names. Measured on the
corpora whose units carry timestamps (LoCoMo, LongMemEval); EpBench's chapters have none.
"""

from __future__ import annotations

import re
from typing import Any

from ..answer_text import find_dates
from ..runs.health_file import Check
from .grading import check, not_measured, pct, share

SCOPE = "context"
NAME = "unit_dates"
# LongMemEval's session stamps ("2023/05/20 (Sat) 02:21"): year first, which the answer
# matcher's date patterns (evaluation/answer_text.py) do not read
_YEAR_FIRST = re.compile(r"\b(\d{4})/(\d{1,2})/(\d{1,2})\b")


def day_key(text: str | None) -> str | None:
    """The calendar day a timestamp names, as YYYY-MM-DD (None if it names no full date)."""
    days = dates_shown(str(text or ""))
    return min(days) if days else None


def dates_shown(text: str) -> set[str]:
    """Every full date written in the text, as YYYY-MM-DD."""
    out = {d.key for d in find_dates(text) if d.day is not None}
    out |= {f"{int(y):04d}-{int(m):02d}-{int(d):02d}" for y, m, d in _YEAR_FIRST.findall(text)
            if 1 <= int(m) <= 12 and 1 <= int(d) <= 31}
    return out


def unit_dates_check(predictions: list[dict[str, Any]], unit_dates: dict[str, dict[str, str]] | None,
                     limits: dict[str, Any]) -> Check:
    """Share of the contexts naming at least one dated unit that show none of those units' dates.
    `unit_dates`: corpus id -> unit id -> its day, YYYY-MM-DD (None: the benchmark data is not on this machine)."""
    if unit_dates is None:
        return not_measured(NAME, SCOPE, limits, "the units' dates are not readable here (no benchmark data)")
    named = undated = 0
    example = None
    for p in predictions:
        dates = unit_dates.get(str(p.get("corpus_id")), {})
        wanted = {dates[u] for u in map(str, p.get("context_chapters") or []) if u in dates}
        if not wanted:
            continue
        named += 1
        if not wanted & dates_shown(str(p.get("context_text") or "")):
            undated += 1
            example = example or p.get("question_id")
    if not named:
        return not_measured(NAME, SCOPE, limits, "no context names a dated unit (undated corpus)")
    what = f"{pct(undated, named)} contexts that name dated units show none of their dates"
    if example:
        what += f" (e.g. {example}): their temporal questions cannot be answered from the context"
    return check(NAME, SCOPE, share(undated, named), limits, what)
