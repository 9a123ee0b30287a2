"""EpBench per-question scores and aggregates, exactly as in ../shared/docs/PROTOCOLS.md.

Pure functions over judgment records, so `evaluation.rescore` can recompute every number from
judgments.jsonl without a model call.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

POLICIES = ("lenient", "harsh")


@dataclass(frozen=True)
class ItemScore:
    precision: float | None  # None when undefined (nothing claimed)
    recall: float | None  # None when undefined (nothing to find)
    f1: float


def dedupe_gold(gold: Sequence[str], scores: Sequence[float]) -> tuple[list[str], list[float]]:
    """Drop repeated gold items (first kept, order kept) together with their score entries."""
    if len(gold) != len(scores):
        raise ValueError(f"{len(scores)} matching scores for {len(gold)} gold items")
    seen: set[str] = set()
    g_out: list[str] = []
    s_out: list[float] = []
    for g, s in zip(gold, scores, strict=True):
        if g in seen:
            continue
        seen.add(g)
        g_out.append(g)
        s_out.append(float(s))
    return g_out, s_out


def score_question(n_gold: int, matching: Sequence[float], n_pred: int, policy: str = "lenient") -> ItemScore:
    """P/R/F1 for one question from the de-duplicated gold count, its scores and the claim count."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
    if len(matching) != n_gold:
        raise ValueError(f"{len(matching)} matching scores for {n_gold} gold items")
    total = float(sum(matching))
    if policy == "lenient" and n_gold > 0:
        n_pred = min(n_pred, n_gold)
    p = total / n_pred if n_pred > 0 else None
    r = total / n_gold if n_gold > 0 else None
    if p is None and r is None:
        f1 = 1.0  # nothing to find, nothing claimed
    elif p is None or r is None:
        f1 = 0.0  # hallucinated items on a 0-cue question, or nothing claimed when items existed
    elif p == 0 and r == 0:
        f1 = 0.0
    else:
        f1 = 2 * p * r / (p + r)
    return ItemScore(p, r, f1)


def mean_defined(values: Sequence[float | None]) -> float:
    """Mean over defined values (precision/recall are undefined on some questions)."""
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else math.nan
