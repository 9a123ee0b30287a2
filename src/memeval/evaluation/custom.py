"""The protocol for custom datasets: item answers as EpBench does, free text as conversations do.

A question whose gold answer is a list of items is judged with the EpBench item judge (a score
per gold item, P/R/F1 under the lenient or harsh policy); a free-text gold answer gets a
CORRECT/WRONG judge verdict plus token F1 (stemmed, as LoCoMo's). A question's headline score is
its item F1 or its verdict (1/0); tables show both kinds and every stratum the data declares.
`credit` picks raw (the judge's) or grounded credit (only what the answer text supports), as on
the benchmarks (epbench/grounding.py for items, conversations/grounding.py for free text).
Grounding version 2 (`grounding_version`, the shipped default) grounds items as EpBench's
version 2 does (epbench/evidence.py: no credit without evidence, misplaced credit moved back) and
scores list answers with the model-free matcher too (`deterministic`, epbench/matcher.py
match_list), so the table can say how far the judge agrees with it; version 1 did neither.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from memeval.datasets.types import Dataset, Question
from memeval.model_access.chat import ChatModel
from memeval.model_access.errors import JsonOutputError
from memeval.settings_history import Introduced

from .adapters import JudgeMatrixFamily
from .agreement import agreement
from .conversations.grounding import check_credit, ground_verdict
from .conversations.text_overlap import token_f1
from .epbench.behaviour import EpBenchGrounding
from .epbench.evidence import GROUNDING_VERSIONS, ground_v2
from .epbench.grounding import ground
from .epbench.judge import PROMPT_VERSION as ITEM_JUDGE_VERSION
from .epbench.judge import judge_one
from .epbench.matcher import match_list
from .epbench.scoring import POLICIES, dedupe_gold, score_question
from .epbench.universe import Universe
from .presentation import Presentation
from .protocol import Protocol, fmt, provenance_header
from .retrieval_diagnostics import question_diagnostics
from .stats import bootstrap_std, mean_at, nanmean
from .verdict import Verdict

TEXT_JUDGE_VERSION = "custom-text-judge-v1"
ANSWER_PROMPT_VERSION = "custom-answer-v1"
# the score (item F1 or verdict) by answer kind; the report shows every overall number
PRESENTATION = Presentation(headline="overall.score", label="score", groups="by_answer_kind",
                            group_label="answer kind", group_field="answer_kind",
                            stats=("score", "item_f1", "judge", "token_f1"))

_ANSWER_SYSTEM = (
    "You answer questions about a collection of documents using only the material provided. "
    "Each part of the material is headed by its title and, when known, its date. When the "
    "question asks for several things, list every matching item and nothing else; otherwise "
    "reply with a short phrase. If the material does not contain the answer, say that you cannot "
    "find it."
)
_JUDGE_SYSTEM = (
    "You grade a reply to a question about a collection of documents against the gold answer. "
    "Be generous about form: the reply is CORRECT when it states the same thing, fact or time as "
    "the gold answer, even if longer or worded differently. It is WRONG when it states something "
    "else, misses the point of the gold answer, or declines to answer. Return JSON: "
    '{"reasoning": "<one sentence>", "label": "CORRECT" or "WRONG"}.'
)


def text_judge_messages(question: str, gold: str, answer: str) -> list[dict[str, str]]:
    user = f"Question: {question}\nGold answer: {gold}\nReply to grade: {answer}\n\nReturn the JSON object."
    return [{"role": "system", "content": _JUDGE_SYSTEM}, {"role": "user", "content": user}]


def grounded_fields(kind: str, question: str, gold: list[str], answer: str, j: dict[str, Any],
                    rules: EpBenchGrounding | int = 2) -> dict[str, Any]:
    """Grounded credit for one judged line: item credits the text supports (and, from version 2,
    grounded by evidence, the matcher's result), or a grounded verdict."""
    if kind == "items":
        if not EpBenchGrounding.of(rules, known=GROUNDING_VERSIONS).grounds_by_evidence:
            g = ground(answer, j["gold"], j["matching_score"], j["identified_items"], None, question=question)
            return {"matching_score_grounded": g.matching_score, "n_pred_grounded": g.n_pred}
        g = ground_v2(answer, j["gold"], j["matching_score"], j["identified_items"], None, Universe(), question)
        return {"matching_score_grounded": g.matching_score, "n_pred_grounded": g.n_pred,
                "recredited_gold": g.recredited, "deterministic": match_list(question, j["gold"], answer).record()}
    ok = ground_verdict(answer, gold[0] if gold else "", question)
    return {"correct_grounded": int(j["correct"] and ok.supported), "grounding": ok.reason}


class CustomProtocol(Protocol):
    name = "custom"
    version = "1"
    current_grounding = max(GROUNDING_VERSIONS)
    side_by_side_policies = POLICIES  # list answers' item F1 under lenient and harsh
    judge_matrix_family = "memeval.evaluation.custom:JUDGE_MATRIX"
    efficiency_title = "Efficiency and cost (GSW paper Table 3 shape)"  # the report's efficiency table
    settings_history = (Introduced("grounding_version", 1),)  # what its absence meant (upgrade layer)

    @classmethod
    def upgrade_description(cls, desc: dict[str, Any], run_format: int) -> dict[str, Any]:
        """Format 0 left out the grounding version (1: format 0 predates 2 and the key)."""
        out = dict(desc)
        if run_format < 1:
            out.setdefault("grounding_version", 1)
        return out

    def __init__(self, policy: str = "lenient", resamples: int = 1000, seed: int = 0, credit: str = "raw",
                 grounding_version: int = 2):
        if policy not in POLICIES:
            raise ValueError(f"protocol.policy must be one of {POLICIES}, not {policy!r}")
        if grounding_version not in GROUNDING_VERSIONS:
            raise ValueError(f"protocol.grounding_version must be one of {GROUNDING_VERSIONS}, not {grounding_version!r}")
        self.grounding_version = grounding_version
        # the item grounding's behaviours (EpBench's versions 1 and 2, epbench/behaviour.py)
        self.behaviour = EpBenchGrounding.of(grounding_version, known=GROUNDING_VERSIONS)
        self.policy, self.resamples, self.seed = policy, resamples, seed
        self.credit = check_credit(credit)

    def describe(self) -> dict[str, Any]:
        return {"protocol": self.name, "version": self.version, "policy": self.policy,
                "item_judge": ITEM_JUDGE_VERSION, "text_judge": TEXT_JUDGE_VERSION,
                "answer_prompt": ANSWER_PROMPT_VERSION, "credit": self.credit,
                "grounding_version": self.grounding_version}

    def answer_messages(self, question: Question, context_text: str) -> list[dict[str, str]]:
        date = question.attrs.get("question_date")
        when = f"Current date: {date}\n" if date else ""
        user = f"Material:\n{context_text}\n\n{when}Question: {question.text}\nAnswer:"
        return [{"role": "system", "content": _ANSWER_SYSTEM}, {"role": "user", "content": user}]

    async def judge(self, question: Question, prediction: dict[str, Any], dataset: Dataset,
                    judge: ChatModel) -> dict[str, Any]:
        kind = question.attrs["answer_kind"]
        strata = {k: question.attrs[k] for k in question.attrs.get("strata_keys", [])}
        line: dict[str, Any] = {"question_id": question.id, "answer_kind": kind, "strata": strata}
        if kind == "items":
            raw = await judge_one(judge, question.text, list(question.gold), prediction["answer"])
            line["judge_prompt"] = ITEM_JUDGE_VERSION
            if "judge_error" in raw:
                return {**line, **raw}
            gold, scores = dedupe_gold(list(question.gold), raw["matching_score_raw"])
            line = {**line, **raw, "gold": gold, "matching_score": scores}
            return {**line, **grounded_fields(kind, question.text, gold, prediction["answer"], line,
                                              self.behaviour)}
        line["judge_prompt"] = TEXT_JUDGE_VERSION
        try:
            verdict, result = await judge.complete_json(
                text_judge_messages(question.text, question.gold[0], prediction["answer"]), Verdict, max_tokens=300)
        except JsonOutputError as exc:
            return {**line, "judge_error": str(exc), "judge_raw": exc.raw_outputs}
        line = {**line, "label": verdict.label, "correct": int(verdict.label == "CORRECT"),
                "reasoning": verdict.reasoning, "judge_cached": result.cached}
        return {**line, **grounded_fields(kind, question.text, list(question.gold), prediction["answer"], line,
                                          self.behaviour)}

    # -- metrics ---------------------------------------------------------------------------
    def rows(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]],
             policy: str | None = None) -> list[dict[str, Any]]:
        """Per question: kind, strata, headline score, item P/R/F1 or verdict + token F1, recall."""
        by_id = {j["question_id"]: j for j in judgments}
        out = []
        for p in predictions:
            j = by_id.get(p["question_id"], {})
            kind = p.get("answer_kind") or j.get("answer_kind")
            row: dict[str, Any] = {"question_id": p["question_id"], "kind": kind,
                                   "strata": {k: p.get(k) for k in p.get("strata_keys", [])},
                                   "gold_recall": question_diagnostics(p)["gold_recall"],
                                   "score": math.nan, "item_f1": math.nan, "item_precision": math.nan,
                                   "item_recall": math.nan, "judge": math.nan, "token_f1": math.nan}
            if self.credit == "grounded" and ("matching_score" in j or "correct" in j) \
                    and "matching_score_grounded" not in j and "correct_grounded" not in j:  # judged before grounding
                gold_list = p["gold"] if isinstance(p.get("gold"), list) else [str(p.get("gold", ""))]
                j = {**j, **grounded_fields(str(kind), str(p.get("question", "")), gold_list, str(p.get("answer", "")), j,
                                            self.behaviour)}
            grounded = self.credit == "grounded"
            if kind == "items" and "matching_score" in j:
                scores, n_pred = ((j["matching_score_grounded"], j["n_pred_grounded"]) if grounded
                                  else (j["matching_score"], len(j["identified_items"])))
                s = score_question(len(j["gold"]), scores, n_pred, policy or self.policy)
                row.update(score=s.f1, item_f1=s.f1,
                           item_precision=math.nan if s.precision is None else s.precision,
                           item_recall=math.nan if s.recall is None else s.recall)
            elif kind == "text":
                gold = p["gold"][0] if isinstance(p.get("gold"), list) and p["gold"] else str(p.get("gold", ""))
                row["token_f1"] = token_f1(str(p.get("answer", "")), gold)
                if "correct" in j:
                    row["score"] = row["judge"] = float(j["correct_grounded" if grounded else "correct"])
            out.append(row)
        return out

    def _aggregate(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"n": len(rows), "n_items": sum(1 for r in rows if r["kind"] == "items"),
                               "n_text": sum(1 for r in rows if r["kind"] == "text")}
        for key in ("score", "item_f1", "item_precision", "item_recall", "judge", "token_f1", "gold_recall"):
            arr = np.array([r[key] for r in rows], dtype=float)
            out[key] = nanmean(arr) if arr.size else math.nan
            if key in ("score", "item_f1", "judge", "token_f1"):
                out[f"{key}_std"] = bootstrap_std(len(arr), partial(mean_at, arr), self.resamples, self.seed)
        return out

    def metrics(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]],
                policy: str | None = None) -> dict[str, Any]:
        if policy is not None and policy not in POLICIES:
            raise ValueError(f"custom scoring policy must be one of {POLICIES}, not {policy!r}")
        rows = self.rows(judgments, predictions, policy)
        keys = list(dict.fromkeys(k for r in rows for k in r["strata"]))
        failed = [j["question_id"] for j in judgments if "judge_error" in j]
        out = {
            "overall": self._aggregate(rows),
            "by_answer_kind": {k: self._aggregate([r for r in rows if r["kind"] == k])
                               for k in ("items", "text") if any(r["kind"] == k for r in rows)},
            "strata": {key: {str(v): self._aggregate([r for r in rows if str(r["strata"].get(key)) == str(v)])
                             for v in sorted({str(r["strata"][key]) for r in rows if key in r["strata"]})}
                       for key in keys},
            "policy": policy or self.policy, "credit": self.credit,
            "n_judge_failed": len(failed), "judge_failed_ids": failed,
        }
        if self.behaviour.grounds_by_evidence:  # the lines carry the matcher's result
            out["agreement"] = self._agreement(judgments, predictions)
        return out

    def _agreement(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]]) -> dict[str, Any]:
        """The item judge (under the headline credit) against the matcher, on list answers."""
        grounded = self.credit == "grounded"
        items = [j for j in judgments if j.get("answer_kind") == "items" and j.get("deterministic")
                 and "judge_error" not in j]
        answers = {p["question_id"]: str(p.get("answer", "")) for p in predictions}
        return {"credit": self.credit, **agreement(items, lambda j: (
            (j["matching_score_grounded"], j["n_pred_grounded"]) if grounded
            else (j["matching_score"], len(j["identified_items"]))), answers)}

    def policy_overalls(self, judgments: list[dict[str, Any]],
                        predictions: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The overall under each rule where some answers are lists (None otherwise)."""
        if not any(r["kind"] == "items" for r in self.rows(judgments, predictions)):
            return None
        return {p: self._aggregate(self.rows(judgments, predictions, p)) for p in POLICIES}

    def question_scores(self, judgments: list[dict[str, Any]],
                        predictions: list[dict[str, Any]]) -> dict[str, float]:
        """Headline per question: item F1 or the CORRECT verdict; judge failures left out."""
        return self.headline_scores(judgments, predictions)

    def headline_scores(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]],
                        policy: str | None = None) -> dict[str, float]:
        """Per question, item F1 under `policy` (default the configured one) or the verdict."""
        return {r["question_id"]: r["score"] for r in self.rows(judgments, predictions, policy)
                if not math.isnan(r["score"])}

    def presentation(self) -> Presentation:
        """The score by answer kind; per question, item F1 or the verdict (computed)."""
        return PRESENTATION

    # -- table -----------------------------------------------------------------------------
    def table(self, metrics: dict[str, Any], meta: dict[str, Any]) -> str:
        policy = (f"custom: item answers by the EpBench item judge ({metrics['policy']} F1), free-text "
                  f"answers by a CORRECT/WRONG judge ({TEXT_JUDGE_VERSION}) + token F1; "
                  f"{metrics.get('credit', 'raw')} credit")

        def row(label: str, m: dict[str, Any]) -> str:
            return (f"| {label} | {m['n']} | {fmt(m['score'])} ± {fmt(m.get('score_std'))} | "
                    f"{fmt(m['item_f1'])} ({fmt(m['item_precision'])} / {fmt(m['item_recall'])}) n={m['n_items']} | "
                    f"{fmt(m['judge'])} / {fmt(m['token_f1'])} n={m['n_text']} | {fmt(m['gold_recall'])} |")

        lines = [provenance_header(meta, policy), "",
                 f"method: **{meta.get('method', '?')}**; mean context tokens: {meta.get('mean_context_tokens', '?')}; "
                 f"cost USD: {meta.get('cost_usd', '?')}", "",
                 "| group | n | score ± std | item F1 (P / R) | text J / token F1 | gold recall |",
                 "|---|---|---|---|---|---|", row("**overall**", metrics["overall"])]
        lines += [row(f"answer={k}", m) for k, m in metrics["by_answer_kind"].items()]
        for key, values in metrics["strata"].items():
            lines += [row(f"{key}={v}", m) for v, m in values.items()]
        lines += ["", "Score: item F1 for list answers, the judge's CORRECT verdict (1/0) for free-text "
                  "answers; ± = bootstrap std over questions. Gold recall: share of gold units in the context."]
        for rule, m in (metrics.get("by_policy") or {}).items():
            lines.append(f"Under the {rule} rule (list answers' item F1): score {fmt(m['score'])} ± "
                         f"{fmt(m.get('score_std'))}, item F1 {fmt(m['item_f1'])}.")
        agree = metrics.get("agreement") or {}
        if agree.get("n_items"):
            lines.append(f"List answers, judge ({agree['credit']} credit) vs the model-free matcher: "
                         f"{fmt(agree['item_agreement'])} of {agree['n_items']} gold items agree.")
        if metrics.get("n_judge_failed"):
            lines.append(f"Judge failed on {metrics['n_judge_failed']} question(s): excluded, not scored 0.")
        return "\n".join(lines) + "\n"


class CustomMatrix(JudgeMatrixFamily):
    """The judge matrix on a custom dataset: item lists as EpBench's, free text as the conversations'."""

    def question_type(self, q: Question, dataset: Dataset) -> str:
        return "list" if q.attrs.get("answer_kind") == "items" and len(set(q.gold)) > 1 else "default"

    def reference(self, q: Question, dataset: Dataset) -> str:
        return "; ".join(dict.fromkeys(q.gold)) if q.attrs.get("answer_kind") == "items" else str(q.gold[0])

    def model_free(self, q: Question, answer: str, dataset: Dataset, protocol: Protocol) -> float:
        if q.attrs.get("answer_kind") == "items":
            gold = list(dict.fromkeys(q.gold))
            r = match_list(q.text, gold, answer)
            return score_question(len(gold), r.matching_score, len(r.identified_items),
                                  protocol.policy).f1  # type: ignore[attr-defined]
        return float(ground_verdict(answer, str(q.gold[0]), q.text, rules=2).supported)


JUDGE_MATRIX = CustomMatrix()
