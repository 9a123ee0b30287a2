"""EpBench per-question scores and aggregates, exactly as in ../shared/docs/PROTOCOLS.md.

Pure functions over judgment records, so `memeval.evaluation.rescore` can recompute every number from
judgments.jsonl without a model call.

Two precision/recall conventions (`protocol.pr_convention`; F1 is the same under both):
- `defined_only` (PROTOCOLS.md): P is undefined when nothing is claimed, R when there is nothing
  to find; the means run over the defined values, so overall P/R leave out every 0-cue question
  (R) and every answer that claims nothing (P).
- `authors` (the GSW authors' judge, whose numbers are the paper's Table 2): a 0-cue question
  scores P = R = F1 (1 when nothing is claimed, else 0), and an answer that claims nothing
  when there was something to find has R = 0 (P stays undefined). Only under it are overall and
  0-cue P/R comparable with the paper's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

POLICIES = ("lenient", "harsh")
PR_CONVENTIONS = ("defined_only", "authors")


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


def score_question(n_gold: int, matching: Sequence[float], n_pred: int, policy: str = "lenient",
                   convention: str = "defined_only") -> ItemScore:
    """P/R/F1 for one question from the de-duplicated gold count, its scores and the claim count,
    under a P/R `convention` (module docstring)."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
    if convention not in PR_CONVENTIONS:
        raise ValueError(f"pr_convention must be one of {PR_CONVENTIONS}, not {convention!r}")
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
    if convention == "authors":
        if n_gold == 0:  # nothing to find: the question is right or wrong as a whole
            return ItemScore(f1, f1, f1)
        if n_pred == 0:  # nothing claimed: nothing recalled, whatever the judge credited
            return ItemScore(None, 0.0, 0.0)
    return ItemScore(p, r, f1)


def mean_defined(values: Sequence[float | None]) -> float:
    """Mean over defined values (precision/recall are undefined on some questions)."""
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else math.nan
