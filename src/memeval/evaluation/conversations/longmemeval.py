"""The LongMemEval protocol: dated answer prompt, per-type yes/no judge, accuracy by type.

As in the official scorer, the judge answers yes or no with a prompt chosen by question type:
temporal questions tolerate off-by-one counts, knowledge-update questions accept a reply that
also recalls the old value as long as the updated one is given, preference questions are graded
against a rubric, and abstention questions (ids ending `_abs`) are correct when the reply says
the history does not answer them. The wording here is this project's own. Each verdict is kept
raw and grounded (grounding.py); `credit` picks the headline accuracy.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from memeval.datasets.longmemeval import QUESTION_TYPES, S_WARNING
from memeval.datasets.types import Dataset, Question
from memeval.model_access.chat import ChatModel
from memeval.settings_history import Introduced

from ..presentation import Column, Presentation, ReportTable
from ..protocol import Protocol, fmt, provenance_header
from ..stats import bootstrap_std, nanmean
from .behaviour import ConversationGrounding, LongMemEvalBehaviour
from .grounding import (
    GROUNDING_VERSIONS,
    check_credit,
    conversation_notes,
    f1_agreement,
    ground_verdict,
)
from .text_overlap import evidence_recall, token_f1

ANSWER_PROMPT_VERSION = "lme-answer-v1"
JUDGE_VERSION = "v1"
# accuracy by question type, then abstention (across types) and the task-averaged accuracy
PRESENTATION = Presentation(
    headline="overall.accuracy", label="accuracy", groups="types", group_label="question type",
    group_field="question_type", stats=("accuracy",),
    tables=(ReportTable(
        "LongMemEval per question type", "by_row",
        columns=(Column("n", "n", "count"), Column("accuracy ± std", "accuracy"),
                 Column("evidence recall", "evidence_recall", "value")),
        extra_groups=(("abstention", "abstention"),),
        summary=(Column("task-averaged", "task_averaged_accuracy", "value"),)),))

_ANSWER_SYSTEM = (
    "You are a chat assistant with a memory of earlier chat sessions with this user. Excerpts of "
    "those sessions follow, each headed by the date it took place. Answer the user's current "
    "question from them. Work out relative times ('last week', 'how many days ago') from the "
    "current date given with the question. If the sessions do not hold the information needed, "
    "say that you do not know rather than guessing."
)

_JUDGE_SYSTEM = (
    "You are grading a chat assistant's reply to a question about the user's own past "
    "conversations. Read the instructions, then answer with one word: yes or no."
)

_RULES = {
    "default": (
        "Say yes if the reply contains the correct answer, states something equivalent, or "
        "works through steps that arrive at it. Say no if it gives a different answer or only "
        "part of what the correct answer requires."
    ),
    "temporal-reasoning": (
        "Say yes if the reply contains the correct answer, states something equivalent, or "
        "works through steps that arrive at it. Say no if it gives a different answer or only "
        "part of what the correct answer requires. Do not penalise an off-by-one difference in a "
        "count of days, weeks or months (for example 18 days where 19 is expected is still yes)."
    ),
    "knowledge-update": (
        "The user's information changed over time and the correct answer is the most recent "
        "value. Say yes if the reply gives that updated value as the current one, even if it "
        "also mentions earlier values. Say no if it gives only an outdated value or a wrong one."
    ),
    "single-session-preference": (
        "There is no single correct answer: the rubric below says what a personalised reply "
        "should take into account. Say yes if the reply uses the user's personal information in "
        "the way the rubric describes; it does not need to cover every point. Say no otherwise."
    ),
    "abstention": (
        "This question cannot be answered from the user's history (the explanation below says "
        "why). Say yes if the reply declines or says the information is missing or unknown, or "
        "points out the false premise. Say no if it commits to a definite answer."
    ),
}
_TRUTH_LABEL = {"single-session-preference": "Rubric", "abstention": "Why it cannot be answered"}


def judge_kind(question_type: str, is_abstention: bool) -> str:
    """Which judge prompt a question gets: abstention first, then its type, else the default."""
    if is_abstention:
        return "abstention"
    return question_type if question_type in _RULES else "default"


def judge_messages(kind: str, question: str, gold: str, reply: str) -> list[dict[str, str]]:
    label = _TRUTH_LABEL.get(kind, "Correct answer")
    user = (f"{_RULES[kind]}\n\nQuestion: {question}\n{label}: {gold}\nAssistant reply: {reply}\n\n"
            "Is the reply correct? Answer yes or no.")
    return [{"role": "system", "content": _JUDGE_SYSTEM}, {"role": "user", "content": user}]


def parse_yes_no(text: str) -> bool | None:
    """The first standalone yes or no in the judge's reply; None when it gives neither."""
    m = re.search(r"\b(yes|no)\b", text.lower())
    return None if m is None else m.group(1) == "yes"


def grounding(kind: str, question: str, gold: str, answer: str,
              rules: ConversationGrounding | int = 1) -> dict[str, Any]:
    """The grounding fields of a judgments line, by judge kind (abstention: correct means declining;
    preference: a rubric, so only the refusal rule; temporal: counts off by one tolerated), under
    grounding `rules` (behaviour.py, grounding.py)."""
    g = ground_verdict(answer, gold, question, abstention=kind == "abstention",
                       rubric=kind == "single-session-preference", off_by_one=kind == "temporal-reasoning",
                       rules=rules)
    return {"grounded": g.supported, "grounding": g.reason}


def reply_f1(kind: str, gold: str, answer: str) -> float:
    """Token F1 of the reply against the gold answer; NaN where the gold is no answer (rubric,
    abstention explanation)."""
    return math.nan if kind in ("abstention", "single-session-preference") else token_f1(answer, gold)


class LongMemEvalProtocol(Protocol):
    former_paths = ("evaluation.longmemeval.LongMemEvalProtocol",)  # before evaluation/ had family subpackages
    name = "longmemeval"
    version = "1"
    answer_prompt_examples = ("last week", "how many days ago")
    label_set = "memeval.evaluation.conversations.adapters:LONGMEMEVAL_LABELS"
    judge_matrix_family = "memeval.evaluation.conversations.adapters:LONGMEMEVAL_MATRIX"
    # how shared display code words this benchmark (Protocol's phrase attributes, evaluation/phrases.py)
    title = "LongMemEval"
    agreement_check = ("token F1 >= 0.5 (with the AUC: the chance that an answer judged correct overlaps the "
                       "gold more than one judged wrong)")
    model_free_check = "the conversations' grounding check"
    per_type_manner = "LongMemEval's evaluation"  # the judge matrix's per-type rules follow its official one
    efficiency_title = "Efficiency and cost (GSW paper Table 3 shape)"
    # the grounding version came after the last format change (2026-12-06): a config or a
    # protocol description of any format may lack it, and then means version 1 (upgrade layer)
    settings_history = (Introduced("grounding_version", 1, until_format=None),)

    @classmethod
    def upgrade_description(cls, desc: dict[str, Any], run_format: int) -> dict[str, Any]:
        """Any format: the grounding version (1) a description before it left out."""
        out = dict(desc)
        out.setdefault("grounding_version", 1)
        return out
    # 3: list ordinals and a name's acronym; 4: lists of clauses, the gold's leading words (grounding.py);
    # runs configured before 3 keep version 1
    current_grounding = 5

    def __init__(self, variant: str = "oracle", resamples: int = 1000, seed: int = 0, credit: str = "raw",
                 grounding_version: int = 5):
        if grounding_version not in GROUNDING_VERSIONS:
            raise ValueError(f"LongMemEval protocol.grounding_version must be one of {sorted(GROUNDING_VERSIONS)}, "
                             f"not {grounding_version!r} (5 reads hyphenated, glued and acronym forms of gold words; 4 lists of clauses and the gold's leading words; 3 numbered lists and acronyms; 1: runs before "
                             "2026-12-06)")
        self.grounding_version = grounding_version
        self.behaviour = LongMemEvalBehaviour.from_versions(grounding=grounding_version)  # behaviour.py
        self.variant = variant
        self.credit = check_credit(credit)
        self.resamples = resamples
        self.seed = seed

    def describe(self) -> dict[str, Any]:
        return {"protocol": self.name, "version": self.version, "variant": self.variant,
                "answer_prompt": ANSWER_PROMPT_VERSION, "judge_prompts": f"lme-<kind>-{JUDGE_VERSION}",
                "credit": self.credit, "grounding": GROUNDING_VERSIONS[self.grounding_version],
                "grounding_version": self.grounding_version}

    def answer_messages(self, question: Question, context_text: str) -> list[dict[str, str]]:
        date = question.attrs.get("question_date", "unknown")
        user = (f"Chat history:\n{context_text}\n\nCurrent date: {date}\n"
                f"Question: {question.text}\nAnswer:")
        return [{"role": "system", "content": _ANSWER_SYSTEM}, {"role": "user", "content": user}]

    async def judge(self, question: Question, prediction: dict[str, Any], dataset: Dataset,
                    judge: ChatModel) -> dict[str, Any]:
        kind = judge_kind(question.attrs["question_type"], bool(question.attrs.get("is_abstention")))
        messages = judge_messages(kind, question.text, question.gold[0], prediction["answer"])
        result = await judge.complete(messages, max_tokens=10)
        verdict = parse_yes_no(result.text)
        line: dict[str, Any] = {
            "question_id": question.id, "question_type": question.attrs["question_type"],
            "is_abstention": bool(question.attrs.get("is_abstention")), "judge_kind": kind,
            "judge_prompt": f"lme-{kind}-{JUDGE_VERSION}", "judge_reply": result.text,
            "judge_cached": result.cached,
        }
        if verdict is None:
            line["judge_error"] = "the judge answered neither yes nor no"
        else:
            g = grounding(kind, question.text, question.gold[0], prediction["answer"], self.behaviour.grounding)
            line.update(correct=int(verdict), correct_grounded=int(verdict and g["grounded"]), **g)
        return line

    # -- metrics ---------------------------------------------------------------------------
    def _aggregate(self, rows: list[dict[str, Any]], recall: dict[str, float]) -> dict[str, Any]:
        acc = np.array([r["score"] for r in rows], dtype=float)
        rec = np.array([recall.get(r["question_id"], math.nan) for r in rows], dtype=float)
        return {
            "accuracy": float(acc.mean()) if acc.size else math.nan,
            "accuracy_std": bootstrap_std(len(acc), lambda i: float(acc[i].mean()), self.resamples, self.seed),
            "accuracy_raw": nanmean(np.array([r["correct"] for r in rows], dtype=float)),
            "accuracy_grounded": nanmean(np.array([r["correct_grounded"] for r in rows], dtype=float)),
            "evidence_recall": nanmean(rec),
            "n": len(rows),
        }

    def scored(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Judged lines with raw, grounded and headline ("score") verdicts and the reply's token F1;
        lines judged before grounding existed are grounded here from predictions."""
        preds = {p["question_id"]: p for p in predictions}
        rows = []
        for j in judgments:
            if "correct" not in j:
                continue
            p = preds.get(j["question_id"], {})
            kind = j.get("judge_kind") or judge_kind(j["question_type"], bool(j.get("is_abstention")))
            gold = str((p.get("gold") or [""])[0])
            answer = str(p.get("answer", ""))
            ok = j["grounded"] if "grounded" in j else (
                grounding(kind, p.get("question", ""), gold, answer, self.behaviour.grounding)["grounded"]
                if p else True)
            row = {**j, "correct_grounded": int(j["correct"] and ok),
                   "f1": reply_f1(kind, gold, answer) if p else math.nan}
            row["score"] = row["correct_grounded"] if self.credit == "grounded" else row["correct"]
            rows.append(row)
        return rows

    def metrics(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]],
                policy: str | None = None) -> dict[str, Any]:
        if policy is not None:
            raise ValueError("LongMemEval has one scoring policy; run rescore without --policy")
        ok = self.scored(judgments, predictions)
        recall = {p["question_id"]: evidence_recall(p.get("gold_units", []), p.get("context_chapters", []))
                  for p in predictions}
        types = [t for t in QUESTION_TYPES if any(j["question_type"] == t for j in ok)]
        per_type = {t: self._aggregate([j for j in ok if j["question_type"] == t], recall) for t in types}
        out: dict[str, Any] = {
            "credit": self.credit,
            "overall": self._aggregate(ok, recall),
            # how the verdicts line up with token F1 (F1 >= 0.5 agreement, AUC); see grounding.py
            "judge_f1": {c: f1_agreement((float(r[k]), r["f1"]) for r in ok)
                         for c, k in (("raw", "correct"), ("grounded", "correct_grounded"))},
            "grounding_removed": sum(1 for r in ok if r["correct"] and not r["correct_grounded"]),
            "types": per_type,
            "task_averaged_accuracy": (sum(m["accuracy"] for m in per_type.values()) / len(per_type)
                                       if per_type else math.nan),
            "abstention": self._aggregate([j for j in ok if j.get("is_abstention")], recall),
            "judge_prompts": sorted({j.get("judge_prompt", "?") for j in judgments}),
            "n_judge_failed": len(judgments) - len(ok),
            "judge_failed_ids": [j["question_id"] for j in judgments if "correct" not in j],
            "variant": self.variant,
        }
        if self.variant == "s":
            out["data_warning"] = S_WARNING
        return out

    def question_scores(self, judgments: list[dict[str, Any]],
                        predictions: list[dict[str, Any]]) -> dict[str, float]:
        """Per-question headline verdict (under the configured credit), for paired comparisons."""
        return {r["question_id"]: float(r["score"]) for r in self.scored(judgments, predictions)}

    def presentation(self) -> Presentation:
        """Accuracy by question type; per question, the verdict under the configured credit (computed)."""
        return PRESENTATION

    # -- table -----------------------------------------------------------------------------
    def table(self, metrics: dict[str, Any], meta: dict[str, Any]) -> str:
        credit = metrics.get("credit", "raw")
        policy = (f"LongMemEval accuracy ({credit} credit; yes/no judge, per-type prompts lme-*-{JUDGE_VERSION}: "
                  "temporal off-by-one tolerated, knowledge update, preference rubric, abstention)")

        def row(label: str, m: dict[str, Any]) -> str:
            return (f"| {label} | {m['n']} | {fmt(m['accuracy'])} ± {fmt(m['accuracy_std'])} | "
                    f"{fmt(m['evidence_recall'])} |")

        lines = [provenance_header(meta, policy)]
        if metrics.get("data_warning") and metrics["data_warning"] not in meta.get("data_notes", []):
            lines.append(f"- data note: {metrics['data_warning']}")
        lines += ["", f"method: **{meta.get('method', '?')}**; variant: {metrics.get('variant')}; "
                  f"mean context tokens: {meta.get('mean_context_tokens', '?')}; cost USD: "
                  f"{meta.get('cost_usd', '?')}", "",
                  f"| question type | n | accuracy ({credit} credit) ± std | evidence recall |", "|---|---|---|---|"]
        lines += [row(t, m) for t, m in metrics["types"].items()]
        lines.append(row("abstention (_abs, across types)", metrics["abstention"]))
        lines.append(row("**overall**", metrics["overall"]))
        lines += ["", f"Task-averaged accuracy (mean over types): {fmt(metrics['task_averaged_accuracy'])}.",
                  "± = bootstrap std over questions (1000 resamples). Evidence recall = share of the "
                  "question's evidence sessions present in the context."]
        lines += conversation_notes(metrics, "Accuracy", "accuracy")
        if metrics.get("n_judge_failed"):
            lines.append(f"Judge gave no yes/no on {metrics['n_judge_failed']} question(s): excluded, not scored 0.")
        return "\n".join(lines) + "\n"
