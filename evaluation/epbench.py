"""The EpBench protocol: shared answer prompt, one-call judge, P/R/F1 by cue bucket, tables."""

from __future__ import annotations

import math
from typing import Any

from datasets.epbench import BUCKETS
from datasets.types import Dataset, Question
from model_access.chat import ChatModel

from .epbench_judge import PROMPT_VERSION, judge_one
from .epbench_scoring import POLICIES, dedupe_gold, mean_defined, score_question
from .protocol import Protocol, fmt, provenance_header
from .stats import bootstrap_std

_ANSWER_SYSTEM = (
    "You answer questions about a long narrative using only the material provided. When the "
    "question asks for a list, give every matching item and nothing else. If the material does "
    "not contain the answer, say that you cannot find it."
)


class EpBenchProtocol(Protocol):
    name = "epbench"
    version = "1"

    def __init__(self, policy: str = "lenient", resamples: int = 1000, seed: int = 0):
        if policy not in POLICIES:
            raise ValueError(f"scoring.policy must be one of {POLICIES}, not {policy!r}")
        self.policy = policy
        self.resamples = resamples
        self.seed = seed

    def answer_messages(self, question: Question, context_text: str) -> list[dict[str, str]]:
        user = f"Material:\n{context_text}\n\nQuestion: {question.text}"
        return [{"role": "system", "content": _ANSWER_SYSTEM}, {"role": "user", "content": user}]

    async def judge(self, question: Question, prediction: dict[str, Any], dataset: Dataset,
                    judge: ChatModel) -> dict[str, Any]:
        chapter_text = None
        if question.attrs.get("retrieval_type") == "Full event details" and question.gold_units:
            chapter_text = dataset.corpus_for(question).unit(question.gold_units[0]).text
        raw = await judge_one(judge, question.text, list(question.gold), prediction["answer"], chapter_text)
        line: dict[str, Any] = {
            "question_id": question.id, "bucket": question.attrs["bucket"],
            "get": question.attrs["get"], "retrieval_type": question.attrs["retrieval_type"],
            "judge_prompt": PROMPT_VERSION, **raw,
        }
        if "judge_error" in raw:
            line["gold"] = list(dict.fromkeys(question.gold))
            return line
        gold, scores = dedupe_gold(list(question.gold), raw["matching_score_raw"])
        line["gold"], line["matching_score"] = gold, scores
        s = score_question(len(gold), scores, len(raw["identified_items"]), self.policy)
        line.update(precision=s.precision, recall=s.recall, f1=s.f1)
        return line

    # -- metrics ---------------------------------------------------------------------------
    def per_question(self, j: dict[str, Any], policy: str | None = None):
        return score_question(len(j["gold"]), j["matching_score"], len(j["identified_items"]),
                              policy or self.policy)

    def _aggregate(self, rows: list[dict[str, Any]], policy: str) -> dict[str, Any]:
        scores = [self.per_question(r, policy) for r in rows]
        f1 = [s.f1 for s in scores]
        p = [s.precision for s in scores]
        r = [s.recall for s in scores]
        kw = {"resamples": self.resamples, "seed": self.seed}
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

    def metrics(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]],
                policy: str | None = None) -> dict[str, Any]:
        policy = policy or self.policy
        ok = [j for j in judgments if "judge_error" not in j]
        out: dict[str, Any] = {
            "overall": self._aggregate(ok, policy),
            "buckets": {b: self._aggregate([j for j in ok if j["bucket"] == b], policy)
                        for b in BUCKETS if any(j["bucket"] == b for j in ok)},
            "policy": policy,
            "n_judge_failed": len(judgments) - len(ok),
            "judge_failed_ids": [j["question_id"] for j in judgments if "judge_error" in j],
        }
        get_all = [j for j in ok if j.get("get") == "all"]
        out["get_all"] = self._aggregate(get_all, policy)
        out["by_retrieval_type"] = {
            t: self._aggregate([j for j in ok if j.get("retrieval_type") == t], policy)
            for t in sorted({j.get("retrieval_type") for j in ok})
        }
        out["simple_recall"], out["simple_recall_std"] = self._simple_recall(get_all)
        out["chronological_awareness"] = None  # needs the order judge call; not computed yet
        return out

    def _simple_recall(self, rows: list[dict[str, Any]]) -> tuple[float, float]:
        """EpBench Simple Recall: unweighted mean over buckets of mean lenient F1 (get == all)."""
        f1 = [self.per_question(r, "lenient").f1 for r in rows]
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

    # -- table -----------------------------------------------------------------------------
    def table(self, metrics: dict[str, Any], meta: dict[str, Any]) -> str:
        def cell(m: dict[str, Any]) -> str:
            return f"{fmt(m['f1'])} ± {fmt(m['f1_std'])} ({fmt(m['precision'])} / {fmt(m['recall'])}) n={m['n']}"

        cols = ["overall", *metrics["buckets"].keys()]
        head = "| method | " + " | ".join(cols) + " | simple recall | ctx tokens | cost USD |"
        sep = "|" + "---|" * (len(cols) + 4)
        row = [cell(metrics["overall"]), *(cell(metrics["buckets"][b]) for b in metrics["buckets"])]
        ctx = meta.get("mean_context_tokens")
        cost = meta.get("cost_usd")
        line = (f"| {meta.get('method', '?')} | " + " | ".join(row)
                + f" | {fmt(metrics['simple_recall'])} | {ctx if ctx is not None else '?'}"
                + f" | {cost if cost is not None else '?'} |")
        notes = ["", "Cells: F1 ± bootstrap std (precision / recall), n questions."]
        if metrics.get("n_judge_failed"):
            notes.append(f"Judge failed on {metrics['n_judge_failed']} question(s): excluded, not scored 0.")
        return "\n".join([provenance_header(meta, metrics["policy"]), "", head, sep, line, *notes]) + "\n"
