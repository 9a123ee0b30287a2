"""The hub-unit check: one unit served whatever the question asks.

A retriever whose index reaches only a few units (a graph with nodes in four sessions of
nineteen) hands those units to nearly every question. The contexts still differ in their other
units and in order, so `distinct_contexts` passes them; what gives them away is one unit present
in almost every context, where an even spread of the same number of units per context would put
each unit in a fraction of them. Measured per corpus with enough questions (one question per
haystack, LongMemEval's layout, cannot show it) and only where contexts hold at most half the
corpus (Vanilla's whole-corpus context holds every unit by design).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from ..runs.health_file import Check
from .grading import check, not_measured

SCOPE = "context"
NAME = "hub_unit"


def _units(p: dict[str, Any]) -> set[str]:
    return {str(u) for u in (p.get("context_chapters") or [])}


def hub_unit_check(predictions: list[dict[str, Any]], corpus_units: dict[str, int], limits: dict[str, Any]) -> Check:
    """Largest share of a corpus's contexts that hold its most frequent unit, over the corpora
    with at least `limits['min_questions']` contexts naming a unit that hold at most half its units."""
    by_corpus: dict[str, list[set[str]]] = defaultdict(list)
    for p in predictions:
        if units := _units(p):  # an empty context is empty_contexts' to count
            by_corpus[str(p.get("corpus_id"))].append(units)
    worst: tuple[float, str] | None = None
    for cid, contexts in sorted(by_corpus.items()):
        total = corpus_units.get(cid)
        n = len(contexts)
        if not total or n < limits["min_questions"]:
            continue
        mean = sum(len(c) for c in contexts) / n
        if mean > total / 2:
            continue
        counts = Counter(u for c in contexts for u in c)
        unit, held = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        value = round(held / n, 4)
        what = (f"unit {unit} of {cid} is in {held} of the {n} contexts that name a unit ({100 * value:.0f}%); an even spread of "
                f"{mean:.1f} units per context over its {total} would put each in {100 * mean / total:.0f}%; "
                f"{len(counts)} of {total} units reach any context")
        if worst is None or value > worst[0]:
            worst = (value, what)
    if worst is None:
        return not_measured(NAME, SCOPE, limits, f"no corpus with {limits['min_questions']}+ questions whose "
                                                 "contexts hold at most half its units")
    return check(NAME, SCOPE, worst[0], limits, worst[1])
