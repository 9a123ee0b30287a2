"""The `complete` check: does the run hold an answer and a verdict for every question it should?

A run missing questions (stopped part way, lines deleted, a torn line dropped) still scores, as a
mean over another question set than the one its table names (LoCoMo conv-30: 50 of 105 answers
moved J from 0.272 to 0.240). The expected set is the run's own record (evaluation/runs/completeness.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..runs.completeness import completeness
from ..runs.health_file import Check
from .grading import check, not_measured, pct

SCOPE = "answer"
NAME = "complete"


def complete_check(run: Path, predictions: list[dict[str, Any]], judgments: list[dict[str, Any]],
                   limits: dict[str, Any], dataset: Any = None) -> Check:
    """Share of the run's expected questions without an answer or a verdict."""
    c = completeness(run, dataset, predictions, judgments)
    if not c.n_expected:
        return not_measured(NAME, SCOPE, limits, "the run records no question count (meta.json n_questions) "
                                                 "and its benchmark data is not here to draw them again")
    value = round(c.missing / c.n_expected, 4)
    if not c.partial:
        return check(NAME, SCOPE, value, limits, f"all {c.n_expected} questions answered and judged")
    missing = {} if c.expected is None else {q: "no answer" if q not in c.predicted else "no verdict"
                                             for q in sorted(c.expected - c.scored)}
    return check(NAME, SCOPE, value, limits,
                 f"{c.n_of_n()} scored, {pct(c.missing, c.n_expected)} missing ({c.gaps()}): rerun the "
                 "same `memeval run` command to finish it (free from the cache)",
                 questions=missing)
