"""EpBench metrics from judgments.jsonl alone: P/R/F1 per bucket, Simple Recall, Chronological
Awareness, credit views and judge-matcher agreement (no model call, so rescoring is free)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any

from memeval.datasets.epbench import BUCKETS

from ..agreement import agreement
from ..stats import bootstrap_std
from .behaviour import EpBenchGrounding
from .matcher import checks
from .order import Part, ca_parts, chronological_awareness, needs_order_call
from .scoring import POLICIES, ItemScore, mean_defined, score_question
from .universe import Universe, load_universe

CREDITS = ("raw", "grounded")


def view(j: dict[str, Any], credit: str) -> tuple[list[float], int]:
    """(scores per de-duplicated gold item, number of claimed items) under one credit."""
    if credit == "grounded" and "matching_score_grounded" in j:
        return j["matching_score_grounded"], j["n_pred_grounded"]
    if credit == "deterministic":
        det = j["deterministic"]
        return det["matching_score"], len(det["identified_items"])
    return j["matching_score"], len(j["identified_items"])


class EpBenchMetrics:
    """judgments (+ predictions) -> metrics.json content, under a policy and a headline credit."""

    def __init__(self, policy: str, resamples: int, seed: int, credit: str, data_dir: str | None,
                 book: int | None, grounding: EpBenchGrounding | int = 2, pr_convention: str | None = "defined_only"):
        self.policy = policy
        # None: a run configured before the setting (defined_only, and metrics.json names none)
        self.pr_convention = pr_convention
        self.convention = pr_convention or "defined_only"
        self.resamples = resamples
        self.seed = seed
        self.credit = credit
        self.data_dir = data_dir
        self.book = book
        self.grounding = EpBenchGrounding.of(grounding)

    @property
    def universe(self) -> Universe:
        return load_universe(self.data_dir, self.book)

    def per_question(self, j: dict[str, Any], policy: str | None = None,
                     credit: str | None = None) -> ItemScore:
        scores, n_pred = view(j, credit or self.credit)
        return score_question(len(j["gold"]), scores, n_pred, policy or self.policy, self.convention)

    def _aggregate(self, rows: list[dict[str, Any]], policy: str, credit: str | None = None) -> dict[str, Any]:
        scores = [self.per_question(r, policy, credit) for r in rows]
        f1 = [s.f1 for s in scores]
        p = [s.precision for s in scores]
        r = [s.recall for s in scores]
        kw: dict[str, Any] = {"resamples": self.resamples, "seed": self.seed}
        n = len(rows)
        return {
            "f1": sum(f1) / n if n else math.nan,
            "f1_std": bootstrap_std(n, lambda i: sum(f1[k] for k in i) / n, **kw),
            "precision": mean_defined(p),
            "precision_std": bootstrap_std(n, lambda i: mean_defined([p[k] for k in i]), **kw),
            "recall": mean_defined(r),
            "recall_std": bootstrap_std(n, lambda i: mean_defined([r[k] for k in i]), **kw),
            "n": n,
        }

    def _complete(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]]) -> int:
        """Add grounding and matcher fields to lines judged before they existed; returns how many."""
        preds = {p["question_id"]: p for p in predictions}
        added = 0
        for j in judgments:
            p = preds.get(j["question_id"])
            if "judge_error" in j or "deterministic" in j or p is None or "answer" not in p:
                continue
            j.update(checks(p.get("question", ""), j.get("retrieval_type") or "", j["gold"],
                            j["matching_score"], j["identified_items"], p["answer"], self.universe,
                            self.grounding))
            added += 1
        return added

    def metrics(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]],
                policy: str | None = None) -> dict[str, Any]:
        policy = policy or self.policy
        judgments = [dict(j) for j in judgments]
        backfilled = self._complete(judgments, predictions)
        ok = [j for j in judgments if "judge_error" not in j]
        checked = [j for j in ok if "matching_score_grounded" in j]
        # the headline falls back to raw credit, and says so, if no line carries grounded credit
        credit = self.credit if self.credit == "raw" or checked else "raw"

        def agg(rows: list[dict[str, Any]], c: str | None = None) -> dict[str, Any]:
            return self._aggregate(rows, policy, c or credit)

        out: dict[str, Any] = {
            "overall": agg(ok),
            "buckets": {b: agg([j for j in ok if j["bucket"] == b])
                        for b in BUCKETS if any(j["bucket"] == b for j in ok)},
            "policy": policy,
            **({"pr_convention": self.pr_convention} if self.pr_convention else {}),
            "credit": credit,
            "judge_mode": sorted({j.get("judge_mode", "one_pass") for j in ok}),
            "n_judge_failed": len(judgments) - len(ok),
            "judge_failed_ids": [j["question_id"] for j in judgments if "judge_error" in j],
            # the judge credited more gold items than it identified: P can exceed 1 under the
            # official formula (kept as is for comparability); grounded credit removes these
            "over_credited_ids": [j["question_id"] for j in ok
                                  if sum(j["matching_score"]) > len(j["identified_items"])],
        }
        get_all = [j for j in ok if j.get("get") == "all"]
        out["get_all"] = agg(get_all)
        retrieval_types: set[Any] = {j.get("retrieval_type") for j in ok}
        out["by_retrieval_type"] = {
            t: agg([j for j in ok if j.get("retrieval_type") == t])
            for t in sorted(retrieval_types)
        }
        out["simple_recall"], out["simple_recall_std"] = self._simple_recall(get_all, credit)
        out["chronological_awareness"] = self._chronological(ok, credit)
        matched = [j for j in checked if j.get("deterministic")]
        out["by_credit"] = {"raw": agg(ok, "raw")}
        if checked:
            out["by_credit"]["grounded"] = agg(checked, "grounded")
        if matched:
            out["by_credit"]["deterministic"] = agg(matched, "deterministic")
        out["grounding"] = {
            "n_checked": len(checked), "n_backfilled_from_predictions": backfilled,
            "unsupported_items": sum(len(j["unsupported_items"]) for j in checked),
            "credited_absent_gold": sum(len(j["credited_absent_gold"]) for j in checked),
            "left_to_judge": sum(len(j.get("left_to_judge", [])) for j in checked),
            "questions_changed": sum(1 for j in checked
                                     if j["matching_score_grounded"] != j["matching_score"]
                                     or j["unsupported_items"]),
        }
        if self.grounding.grounds_by_evidence:
            out["grounding"]["recredited_gold"] = sum(len(j.get("recredited_gold", [])) for j in checked)
        if self.grounding.floors_claims_with_matcher:
            out["grounding"]["claims_beyond_judge"] = sum(int(j.get("claims_beyond_judge", 0)) for j in checked)
            out["grounding"]["questions_with_claims_beyond_judge"] = sum(
                1 for j in checked if j.get("claims_beyond_judge", 0))
        if self.grounding.zero_cue_assertion_claims:
            out["grounding"]["zero_cue_assertions"] = sum(1 for j in checked if j.get("zero_cue_assertion"))
        answers = {p["question_id"]: p.get("answer", "") for p in predictions}
        # top level: the headline credit vs the matcher; the LLM judge's own (raw) agreement is the
        # top level under raw credit, else other_credit.raw (evaluation.agreement.judge_block): grounded
        # credit is partly built from the matcher, so its agreement is never the judge's
        out["agreement"] = {"credit": credit,
                            **agreement(matched, lambda j: view(j, credit), answers),
                            "other_credit": {c: agreement(matched, partial(view, credit=c), answers,
                                                          list_disagreements=False)
                                             for c in CREDITS if c != credit}}
        return out

    def by_policy(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]]) -> dict[str, Any]:
        """Every rule's overall and bucket F1 side by side under the headline credit (harsh charges
        each claimed item; lenient caps the claims at the gold count, so a method that lists
        everything loses only under harsh): metrics.json `by_policy`, a statistics block."""
        judgments = [dict(j) for j in judgments]
        self._complete(judgments, predictions)
        ok = [j for j in judgments if "judge_error" not in j]
        credit = self.credit if self.credit == "raw" or any("matching_score_grounded" in j for j in ok) else "raw"
        return {p: {**self._aggregate(ok, p, credit),
                    "buckets_f1": {b: v["f1"] for b, v in self._bucket_f1(ok, p, credit).items()}}
                for p in POLICIES}

    def _bucket_f1(self, rows: list[dict[str, Any]], policy: str, credit: str) -> dict[str, dict[str, Any]]:
        """Mean F1 per cue bucket under `policy` (no bootstrap: the side-by-side view's cells)."""
        out = {}
        for b in BUCKETS:
            f1 = [self.per_question(r, policy, credit).f1 for r in rows if r["bucket"] == b]
            if f1:
                out[b] = {"f1": sum(f1) / len(f1), "n": len(f1)}
        return out

    def question_scores(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]],
                        policy: str | None = None) -> dict[str, float]:
        """Per-question headline F1 (under the configured credit and `policy`, default the
        configured one), for paired comparisons and the statistics blocks."""
        judgments = [dict(j) for j in judgments]
        self._complete(judgments, predictions)
        return {j["question_id"]: self.per_question(j, policy).f1 for j in judgments if "judge_error" not in j}

    def _simple_recall(self, rows: list[dict[str, Any]], credit: str) -> tuple[float, float]:
        """EpBench Simple Recall: unweighted mean over buckets of mean lenient F1 (get == all)."""
        f1 = [self.per_question(r, "lenient", credit).f1 for r in rows]
        buckets = [r["bucket"] for r in rows]

        def stat(idx: list[int]) -> float:
            means = []
            for b in BUCKETS:
                vals = [f1[k] for k in idx if buckets[k] == b]
                if vals:
                    means.append(sum(vals) / len(vals))
            return sum(means) / len(means) if means else math.nan

        n = len(rows)
        return stat(list(range(n))), bootstrap_std(n, stat, self.resamples, self.seed)

    def chronological_credited(self, judgments: list[dict[str, Any]],
                               predictions: list[dict[str, Any]], credit: str) -> dict[str, Any]:
        """Chronological Awareness whose Order counts only the items the headline credit credits
        (order.credited_mapping): the report shows it; metrics.json keeps the score stage's."""
        judgments = [dict(j) for j in judgments]
        self._complete(judgments, predictions)
        ok = [j for j in judgments if "judge_error" not in j]
        return self._chronological(ok, credit, credited=True)

    def _chronological(self, rows: list[dict[str, Any]], credit: str, credited: bool = False) -> dict[str, Any]:
        """Latest, Order and CA (PROTOCOLS.md) with bootstrap std; lenient F1 as Simple Recall."""
        parts = ca_parts(rows, lambda r: self.per_question(r, "lenient", credit).f1,
                         (lambda r: view(r, credit)[0]) if credited else None)
        stats = chronological_awareness(parts)
        for key in ("latest", "order", "ca"):
            stats[f"{key}_std"] = bootstrap_std(
                len(parts), partial(_ca_field, parts, key), self.resamples, self.seed)
        needed = [r for r in rows if needs_order_call(r.get("get"), len(r["gold"]))]
        stats["order_judge_failed_ids"] = [r["question_id"] for r in needed if "order_error" in r]
        stats["order_judge_missing_ids"] = [r["question_id"] for r in needed
                                            if "order_mapping" not in r and "order_error" not in r]
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in stats.items()}


def _ca_field(parts: Sequence[Part], key: str, idx: Sequence[int]) -> float:
    """One of Latest, Order and CA on a bootstrap resample of the lines' parts."""
    return chronological_awareness(parts, idx)[key]
