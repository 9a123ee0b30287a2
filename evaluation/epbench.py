"""The EpBench protocol: shared answer prompt, LLM judge + grounding + matcher, P/R/F1, tables.

Every judgments line keeps the judge's raw credit (the official protocol) and adds the grounded
credit (only what the answer text supports) and a deterministic matcher's result, so metrics
can report all three and their agreement from judgments.jsonl alone; `credit` picks which one
is the headline, and the table says which.
"""

from __future__ import annotations

import math
from typing import Any

from datasets.epbench import BUCKETS
from datasets.types import Dataset, Question
from model_access.chat import ChatModel

from .agreement import agreement
from .deterministic_matcher import match_answer
from .epbench_judge import PROMPT_VERSION, TWO_PASS_VERSION, judge_one, judge_two_pass
from .epbench_order import ca_parts, chronological_awareness, judge_order, needs_order_call
from .epbench_scoring import POLICIES, ItemScore, dedupe_gold, mean_defined, score_question
from .epbench_universe import KIND_BY_RETRIEVAL, Universe, load_universe
from .grounding import ground
from .protocol import Protocol, fmt, provenance_header
from .stats import bootstrap_std

_ANSWER_SYSTEM = (
    "You answer questions about a long narrative using only the material provided. When the "
    "question asks for a list, give every matching item and nothing else. If the material does "
    "not contain the answer, say that you cannot find it."
)
CREDITS = ("raw", "grounded")
JUDGE_MODES = ("one_pass", "two_pass")


def checks(question: str, retrieval_type: str, gold: list[str], scores: list[float],
           identified: list[str], answer: str, universe: Universe) -> dict[str, Any]:
    """The grounded credit and the matcher's result for one judged answer (model-free)."""
    kind = KIND_BY_RETRIEVAL.get(retrieval_type)
    g = ground(answer, gold, scores, identified, kind, universe.values(kind), universe.generic_event_words,
               question)
    det = match_answer(question, retrieval_type, gold, answer, universe)
    return {
        "identified_items_grounded": g.identified_items, "unsupported_items": g.unsupported_items,
        "matching_score_grounded": g.matching_score, "n_pred_grounded": g.n_pred,
        "credited_absent_gold": g.credited_absent_gold, "left_to_judge": g.left_to_judge,
        "deterministic": det.record() if det else None,
    }


def view(j: dict[str, Any], credit: str) -> tuple[list[float], int]:
    """(scores per de-duplicated gold item, number of claimed items) under one credit."""
    if credit == "grounded" and "matching_score_grounded" in j:
        return j["matching_score_grounded"], j["n_pred_grounded"]
    if credit == "deterministic":
        det = j["deterministic"]
        return det["matching_score"], len(det["identified_items"])
    return j["matching_score"], len(j["identified_items"])


class EpBenchProtocol(Protocol):
    name = "epbench"
    version = "2"

    def __init__(self, policy: str = "lenient", resamples: int = 1000, seed: int = 0,
                 credit: str = "raw", judge_mode: str = "one_pass", data_dir: str | None = None,
                 book: int | None = None):
        if policy not in POLICIES:
            raise ValueError(f"scoring.policy must be one of {POLICIES}, not {policy!r}")
        if credit not in CREDITS:
            raise ValueError(f"protocol.credit must be one of {CREDITS}, not {credit!r}")
        if judge_mode not in JUDGE_MODES:
            raise ValueError(f"protocol.judge_mode must be one of {JUDGE_MODES}, not {judge_mode!r}")
        self.policy = policy
        self.resamples = resamples
        self.seed = seed
        self.credit = credit
        self.judge_mode = judge_mode
        self.data_dir = data_dir
        self.book = book

    @property
    def universe(self) -> Universe:
        return load_universe(self.data_dir, self.book)

    def describe(self) -> dict[str, Any]:
        return {"protocol": self.name, "version": self.version, "credit": self.credit,
                "judge_mode": self.judge_mode, "matcher_universe": self.universe.source}

    def answer_messages(self, question: Question, context_text: str) -> list[dict[str, str]]:
        user = f"Material:\n{context_text}\n\nQuestion: {question.text}"
        return [{"role": "system", "content": _ANSWER_SYSTEM}, {"role": "user", "content": user}]

    async def judge(self, question: Question, prediction: dict[str, Any], dataset: Dataset,
                    judge: ChatModel) -> dict[str, Any]:
        rt = question.attrs.get("retrieval_type")
        chapter_text = None
        if rt == "Full event details" and question.gold_units:
            chapter_text = dataset.corpus_for(question).unit(question.gold_units[0]).text
        two_pass = self.judge_mode == "two_pass" and chapter_text is None
        if two_pass:
            raw = await judge_two_pass(judge, question.text, list(question.gold), prediction["answer"])
        else:
            raw = await judge_one(judge, question.text, list(question.gold), prediction["answer"], chapter_text)
        line: dict[str, Any] = {
            "question_id": question.id, "bucket": question.attrs["bucket"],
            "get": question.attrs["get"], "retrieval_type": rt,
            "judge_prompt": TWO_PASS_VERSION if two_pass else PROMPT_VERSION,
            "judge_mode": "two_pass" if two_pass else "one_pass", **raw,
        }
        if "judge_error" in line:
            line["gold"] = list(dict.fromkeys(question.gold))
            return line
        gold, scores = dedupe_gold(list(question.gold), raw["matching_score_raw"])
        line["gold"], line["matching_score"] = gold, scores
        s = score_question(len(gold), scores, len(raw["identified_items"]), self.policy)
        line.update(precision=s.precision, recall=s.recall, f1=s.f1)
        line.update(checks(question.text, rt or "", gold, scores, line["identified_items"],
                           prediction["answer"], self.universe))
        if needs_order_call(line["get"], len(gold)):  # Chronological Awareness: the second call
            line.update(await judge_order(judge, question.text, gold, prediction["answer"],
                                          line["identified_items"]))
        return line

    # -- metrics ---------------------------------------------------------------------------
    def per_question(self, j: dict[str, Any], policy: str | None = None,
                     credit: str | None = None) -> ItemScore:
        scores, n_pred = view(j, credit or self.credit)
        return score_question(len(j["gold"]), scores, n_pred, policy or self.policy)

    def _aggregate(self, rows: list[dict[str, Any]], policy: str, credit: str | None = None) -> dict[str, Any]:
        scores = [self.per_question(r, policy, credit) for r in rows]
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

    def _complete(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]]) -> int:
        """Add grounding and matcher fields to lines judged before they existed; returns how many."""
        preds = {p["question_id"]: p for p in predictions}
        added = 0
        for j in judgments:
            p = preds.get(j["question_id"])
            if "judge_error" in j or "deterministic" in j or p is None or "answer" not in p:
                continue
            j.update(checks(p.get("question", ""), j.get("retrieval_type") or "", j["gold"],
                            j["matching_score"], j["identified_items"], p["answer"], self.universe))
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
        out["by_retrieval_type"] = {
            t: agg([j for j in ok if j.get("retrieval_type") == t])
            for t in sorted({j.get("retrieval_type") for j in ok})
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
        answers = {p["question_id"]: p.get("answer", "") for p in predictions}
        out["agreement"] = {"credit": credit,
                            **agreement(matched, lambda j: view(j, credit), answers),
                            "other_credit": {c: agreement(matched, lambda j, c=c: view(j, c), answers,
                                                          list_disagreements=False)
                                             for c in CREDITS if c != credit}}
        return out

    def question_scores(self, judgments: list[dict[str, Any]],
                        predictions: list[dict[str, Any]]) -> dict[str, float]:
        """Per-question headline F1 (under the configured credit), for paired comparisons."""
        judgments = [dict(j) for j in judgments]
        self._complete(judgments, predictions)
        return {j["question_id"]: self.per_question(j).f1 for j in judgments if "judge_error" not in j}

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

    def _chronological(self, rows: list[dict[str, Any]], credit: str) -> dict[str, Any]:
        """Latest, Order and CA (PROTOCOLS.md) with bootstrap std; lenient F1 as Simple Recall."""
        parts = ca_parts(rows, lambda r: self.per_question(r, "lenient", credit).f1)
        stats = chronological_awareness(parts)
        for key in ("latest", "order", "ca"):
            stats[f"{key}_std"] = bootstrap_std(
                len(parts), lambda i, k=key: chronological_awareness(parts, i)[k], self.resamples, self.seed)
        needed = [r for r in rows if needs_order_call(r.get("get"), len(r["gold"]))]
        stats["order_judge_failed_ids"] = [r["question_id"] for r in needed if "order_error" in r]
        stats["order_judge_missing_ids"] = [r["question_id"] for r in needed
                                            if "order_mapping" not in r and "order_error" not in r]
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in stats.items()}

    # -- table -----------------------------------------------------------------------------
    def table(self, metrics: dict[str, Any], meta: dict[str, Any]) -> str:
        def cell(m: dict[str, Any]) -> str:
            return f"{fmt(m['f1'])} ± {fmt(m['f1_std'])} ({fmt(m['precision'])} / {fmt(m['recall'])}) n={m['n']}"

        credit = metrics.get("credit", "raw")
        ag = metrics.get("agreement") or {}
        agree = (f"{fmt(ag.get('item_agreement'), 2)} / κ {fmt(ag.get('kappa'), 2)} "
                 f"({ag.get('n_items', 0)} items); questions {fmt(ag.get('question_agreement'), 2)}"
                 ) if ag.get("n_questions") else "–"
        cols = [f"overall ({credit} credit)", "judge agreement", *metrics["buckets"].keys()]
        head = ("| method | " + " | ".join(cols)
                + " | simple recall | chronological awareness (latest / order) | ctx tokens | cost USD |")
        sep = "|" + "---|" * (len(cols) + 5)
        ca = metrics.get("chronological_awareness") or {}
        ca_cell = (f"{fmt(ca.get('ca'))} ± {fmt(ca.get('ca_std'))} ({fmt(ca.get('latest'))} n={ca.get('n_latest', 0)}"
                   f" / {fmt(ca.get('order'))} n={ca.get('n_order', 0)})") if ca else "not computed"
        row = [cell(metrics["overall"]), agree, *(cell(metrics["buckets"][b]) for b in metrics["buckets"])]
        ctx = meta.get("mean_context_tokens")
        cost = meta.get("cost_usd")
        line = (f"| {meta.get('method', '?')} | " + " | ".join(row)
                + f" | {fmt(metrics['simple_recall'])} | {ca_cell} | {ctx if ctx is not None else '?'}"
                + f" | {cost if cost is not None else '?'} |")
        modes = "+".join(metrics.get("judge_mode") or ["one_pass"])
        official = "the official protocol" if credit == "raw" else "only credit the answer text supports"
        notes = ["", f"Cells: F1 ± bootstrap std (precision / recall), n questions; credit: **{credit}** "
                 f"({official}); judge: {modes}.",
                 "Judge agreement: share of gold-item credits (0 / 0.5 / 1) on which the LLM judge and "
                 "the deterministic matcher agree / Cohen's kappa; questions: share with every credit "
                 "equal (and, with nothing to find, both or neither seeing a claim); disagreements are "
                 "listed in metrics.json (agreement.disagreements)."]
        notes.append("Chronological awareness: mean of Latest (mean lenient F1, get == latest, buckets 2, "
                     "3-5, 6+) and Order (order judge on get == chronological with 2+ gold items: share "
                     "fully matched x mean Kendall tau, floored at 0); – where the subset has no such "
                     "question.")
        if ca.get("order_judge_missing_ids"):
            notes.append(f"Order judge missing on {len(ca['order_judge_missing_ids'])} question(s) (judged "
                         "before it existed): rerun stages=[judge] to include them in Order.")
        if ca.get("order_judge_failed_ids"):
            notes.append(f"Order judge failed on {len(ca['order_judge_failed_ids'])} question(s): excluded.")
        bc = metrics.get("by_credit") or {}
        if bc:
            notes.append("Overall F1 by credit: " + "; ".join(
                f"{c} {fmt(bc[c]['f1'])}" for c in ("raw", "grounded", "deterministic") if c in bc) + ".")
        gr = metrics.get("grounding") or {}
        if gr.get("n_checked"):
            notes.append(f"Grounding: {gr['unsupported_items']} claimed item(s) not in the answer text, "
                         f"{gr['credited_absent_gold']} credited gold item(s) absent from it, "
                         f"{gr['questions_changed']} question(s) changed.")
        if metrics.get("n_judge_failed"):
            notes.append(f"Judge failed on {metrics['n_judge_failed']} question(s): excluded, not scored 0.")
        if metrics.get("over_credited_ids"):
            notes.append(f"Judge credited more gold items than it identified on {len(metrics['over_credited_ids'])} "
                         "question(s): under the official formula their precision exceeds 1 (see over_credited_ids).")
        policy = f"{metrics['policy']}, {credit} credit"
        return "\n".join([provenance_header(meta, policy), "", head, sep, line, *notes]) + "\n"
