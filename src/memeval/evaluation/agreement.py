"""How far the LLM judge and the deterministic matcher agree, and where they do not.

Neither is ground truth: the matcher misses paraphrases, the judge may credit what the answer
never says. Agreement is measured on item credit (each gold item's 0 / 0.5 / 1 from both), with
Cohen's kappa to discount chance agreement, and per question (all credits equal, and on
questions with nothing to find, both or neither seeing a claimed item). Every disagreement is
listed so a person can look at it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import Any

EXCERPT_CHARS = 240


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two raters over the same items; NaN when chance agreement is total."""
    if len(a) != len(b):
        raise ValueError("both raters must rate the same items")
    n = len(a)
    if n == 0:
        return math.nan
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if expected == 1.0:
        return math.nan
    return (observed - expected) / (1 - expected)


def excerpt(text: str | None, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


View = Callable[[dict[str, Any]], tuple[list[float], int]]


def _summary(pairs: list[tuple[float, float]], questions: list[bool]) -> dict[str, Any]:
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    return {
        "n_items": len(pairs),
        "item_agreement": sum(x == y for x, y in pairs) / len(pairs) if pairs else math.nan,
        "kappa": cohen_kappa(a, b),
        "n_questions": len(questions),
        "question_agreement": sum(questions) / len(questions) if questions else math.nan,
    }


def credited_absent(pairs: list[tuple[float, float]]) -> dict[str, int]:
    """Of the items the model-free rater gives nothing (pairs: judge, rater), how many the judge
    credited at all: the judge's own false credits if the rater is right, which kappa alone hides
    when nearly every item is credited."""
    absent = [j for j, m in pairs if m == 0]
    return {"n": len(absent), "judge_credited": sum(1 for j in absent if j > 0)}


def judge_block(block: Any) -> dict[str, Any] | None:
    """The LLM judge's own (raw, before grounding) agreement with the matcher in a metrics.json
    `agreement` block: the block itself where the headline credit is raw, else its
    `other_credit.raw`; None when it holds neither. A grounded headline's agreement is never the
    judge's: grounding partly builds that credit from the matcher, so it agrees by construction
    (EpBench-20: kappa 0.82-0.95 while the judge's own was 0.00-0.22)."""
    if not isinstance(block, dict):
        return None
    if block.get("credit", "raw") == "raw" and "kappa" in block:
        return block
    raw = (block.get("other_credit") or {}).get("raw")
    return raw if isinstance(raw, dict) else None


def agreement(judgments: list[dict[str, Any]], judge_view: View, answers: dict[str, str],
              list_disagreements: bool = True) -> dict[str, Any]:
    """Judge (as seen through `judge_view`: scores, claim count) vs the matcher on `judgments`.

    Lines without a matcher result (judge failures, unknown question types) are skipped.
    """
    pairs: dict[str, list[tuple[float, float]]] = {}
    agree_q: dict[str, list[bool]] = {}
    rows: list[dict[str, Any]] = []
    for j in judgments:
        det = j.get("deterministic")
        if not det or "judge_error" in j:
            continue
        rt = j.get("retrieval_type", "?")
        scores, n_claimed = judge_view(j)
        m_scores = [float(x) for x in det["matching_score"]]
        same = True
        for g, js, ms in zip(j["gold"], scores, m_scores, strict=True):
            pairs.setdefault(rt, []).append((float(js), ms))
            if float(js) != ms:
                same = False
                rows.append({"question_id": j["question_id"], "retrieval_type": rt, "gold_item": g,
                             "judge_credit": float(js), "matcher_credit": ms,
                             "answer_excerpt": excerpt(answers.get(j["question_id"]))})
        if not j["gold"]:
            judge_claims, matcher_claims = n_claimed > 0, len(det["identified_items"]) > 0
            if judge_claims != matcher_claims:
                same = False
                rows.append({"question_id": j["question_id"], "retrieval_type": rt, "gold_item": None,
                             "judge_credit": None, "matcher_credit": None,
                             "judge_claims": n_claimed, "matcher_claims": len(det["identified_items"]),
                             "answer_excerpt": excerpt(answers.get(j["question_id"]))})
        agree_q.setdefault(rt, []).append(same)
    all_pairs = [p for v in pairs.values() for p in v]
    all_q = [q for v in agree_q.values() for q in v]
    out = _summary(all_pairs, all_q)
    out["by_retrieval_type"] = {rt: _summary(pairs.get(rt, []), agree_q[rt]) for rt in sorted(agree_q)}
    if list_disagreements:
        out["n_disagreements"] = len(rows)
        out["disagreements"] = rows
    return out
