"""The LoCoMo protocol: dated-session answer prompt, CORRECT/WRONG judge, F1 / BLEU-1 / J tables.

Token F1 and BLEU-1 come from predictions.jsonl (official per-category rules, see
text_overlap.py); the judge score (J) from judgments.jsonl, each line naming its prompt version.
Category 5 (adversarial) is always answered, judged and shown in its own row; whether it also
enters "overall" is the `include_category_5` setting (most papers report categories 1-4).
Each verdict is kept raw (the paper's judge) and grounded (grounding.py: CORRECT
only when the answer states the gold's key content); `credit` picks the headline J.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from memeval.datasets.locomo import CATEGORY_NAMES
from memeval.datasets.types import Corpus, Dataset, Question
from memeval.model_access.chat import ChatModel
from memeval.model_access.errors import JsonOutputError
from memeval.settings_history import Introduced

from ..calibration import header_line
from ..presentation import Column, Presentation, ReportTable
from ..protocol import Protocol, Resampling, fmt, provenance_header
from ..stats import bootstrap_std, mean_at
from ..verdict import Verdict
from .behaviour import ConversationGrounding, LoCoMoBehaviour, LoCoMoJudge
from .grounding import (
    GROUNDING_VERSIONS,
    check_credit,
    conversation_notes,
    f1_agreement,
    ground_verdict,
)
from .locomo_answer import ANSWER_PROMPT_VERSIONS, ANSWER_PROMPTS, EXAMPLES, answer_messages
from .text_overlap import evidence_recall, gold_for_scoring, locomo_bleu1, locomo_f1

# J by category; the report's table shows F1, BLEU-1 and J side by side, as the papers do
PRESENTATION = Presentation(
    headline="overall.judge", label="J", groups="categories", group_label="category", group_field="category",
    group_names="category_names", stats=("judge", "f1", "bleu1"),
    tables=(ReportTable(
        "LoCoMo per category", "by_row",
        columns=(Column("n", "n", "count"), Column("F1 ± std", "f1"), Column("BLEU-1 ± std", "bleu1"),
                 Column("J ± std", "judge"), Column("evidence recall", "evidence_recall", "value")),
        notes=("J = LLM judge accuracy; F1 = official token F1; BLEU-1 = unigram BLEU.",)),))
PROMPT_VERSION = "locomo-judge-v1"
# Judge versions (`protocol.judge_version`). Version 2 changes category 5 alone: its verdict is
# the model-free decline check (grounding.py), the judge is not called. Under version 1 the 0.5B
# judge called all 10 hand-labelled category-5 replies WRONG, the 5 correct refusals included
# (its shared prompt calls a reply that declines WRONG); a category-5 prompt of its own, tried
# first, did no better (10 of 10 WRONG). Categories 1-4 send the same messages under both.
JUDGE_PROMPTS = {1: PROMPT_VERSION, 2: "locomo-judge-v2"}
CATEGORY_5_BY_DECLINE = "category 5 by the decline check (no judge call)"
CATEGORY_5_BY_JUDGE = "category 5 by the judge (the shared prompt)"  # version 1
POLICIES = ("categories_1_4", "categories_1_5")
VERDICT_SOURCES = ("judge", "published")
PUBLISHED_PROMPT = "published-verdict"  # the judge_prompt of a line whose verdict the answer's source published


def published_line(question: Question, prediction: dict[str, Any], rules: ConversationGrounding,
                   speakers: tuple[str, ...]) -> dict[str, Any]:
    """A judgments line from an imported answer's published verdict (majority of its judge runs),
    grounded as a judge's verdict is; an answer without one is a judge failure, never a 0."""
    published = (prediction.get("native_answer") or {}).get("published_verdict")
    correct = published_majority(published)
    if correct is None:
        return {"judge_error": f"no published verdict for {question.id} (verdicts=published needs one per answer)"}
    return {**grounded_verdict(question, prediction["answer"], "CORRECT" if correct else "WRONG", speakers,
                               rules),
            "reasoning": f"published verdict {published!r} (majority of its judge runs)", "judge_cached": None}


def grounded_verdict(question: Question, answer: str, label: str, speakers: tuple[str, ...],
                     rules: ConversationGrounding) -> dict[str, Any]:
    """A verdict's judgments fields, a judge's or a published one: the label, raw and grounded credit,
    and the grounding check's own fields."""
    correct = int(label == "CORRECT")
    g = grounding(question.text, question.gold[0], int(question.attrs["category"]), answer, speakers, rules)
    return {"label": label, "correct": correct, "correct_grounded": int(correct and g["grounded"]), **g}


def published_majority(verdict: Any) -> int | None:
    """1 / 0 from a published verdict: a bool, a score (>= 0.5 is correct), or a list of either
    (one per judge run: correct when more than half are); None when there is none."""
    if isinstance(verdict, bool):
        return int(verdict)
    if isinstance(verdict, int | float):
        return int(verdict >= 0.5)
    if isinstance(verdict, list) and verdict and all(isinstance(v, bool | int | float) for v in verdict):
        return int(sum(published_majority(v) or 0 for v in verdict) * 2 > len(verdict))
    return None
# LoCoMo's questions come in 10 conversations: questions of one conversation are not independent
ONE_CONVERSATION = ("one conversation: its questions are not independent samples, so these intervals "
                    "understate the uncertainty of a benchmark-level score")

_JUDGE_SYSTEM = (
    "You grade a reply to a question about a conversation between two people, against the gold "
    "answer. Be generous about form: the reply is CORRECT when it names the same thing, fact or "
    "time as the gold answer, even if it is longer, worded differently, or gives a date in "
    "another format or as a period that contains the gold date. It is WRONG when it names "
    "something else, misses the point of the gold answer, or declines to answer. Return JSON: "
    '{"reasoning": "<one sentence>", "label": "CORRECT" or "WRONG"}.'
)


def judge_messages(question: str, gold: str, answer: str, adversarial: str | None) -> list[dict[str, str]]:
    """Judge prompt; for category 5 the gold is that the conversation does not support the
    question, and the trap answer it presupposes is shown as the wrong one."""
    if adversarial is None:
        truth = f"Gold answer: {gold}"
    else:
        truth = ("Gold answer: the conversation does not contain this; a correct reply says it is "
                 f"not mentioned or not known. A reply asserting '{adversarial}' or any other "
                 "definite answer is WRONG.")
    user = f"Question: {question}\n{truth}\nReply to grade: {answer}\n\nReturn the JSON object."
    return [{"role": "system", "content": _JUDGE_SYSTEM}, {"role": "user", "content": user}]


def _gold(p: dict[str, Any]) -> str:
    g = p.get("gold", "")
    return str(g[0]) if isinstance(g, list | tuple) and g else str(g or "")


def grounding(question: str, gold: str, category: int, answer: str,
              speakers: Sequence[str] = (), rules: ConversationGrounding | int = 1) -> dict[str, Any]:
    """The grounding fields of a judgments line (category 5: correct means declining) under
    grounding `rules`; from version 2 the subject is checked against the conversation's `speakers`."""
    g = ground_verdict(answer, gold_for_scoring(gold, category), question, abstention=int(category) == 5,
                       speakers=speakers, rules=rules)
    return {"grounded": g.supported, "grounding": g.reason}


def _unit(metrics: dict[str, Any]) -> str:
    """What the table's ± resampled (metrics.json `statistics`, written by the score stage)."""
    return str((metrics.get("statistics") or {}).get("resampling_unit", "question"))


_TURN = re.compile(r"(?m)^([A-Z][\w'.-]*(?: [A-Z][\w'.-]*)?): ")


def speakers_of(corpus: Corpus) -> tuple[str, ...]:
    """The conversation's two speakers, read from its turns ('Name: text'), most frequent first."""
    counts = Counter(m.group(1) for u in corpus.units for m in _TURN.finditer(u.text))
    return tuple(name for name, _ in counts.most_common(2))


def _mean(values: list[float]) -> float:
    ok = [v for v in values if not math.isnan(v)]
    return sum(ok) / len(ok) if ok else math.nan


class LoCoMoProtocol(Protocol):
    former_paths = ("evaluation.locomo.LoCoMoProtocol",)  # before evaluation/ had family subpackages
    name = "locomo"
    version = "1"
    label_set = "memeval.evaluation.conversations.adapters:LOCOMO_LABELS"
    judge_matrix_family = "memeval.evaluation.conversations.adapters:LOCOMO_MATRIX"
    # how shared display code words this benchmark (Protocol's phrase attributes, evaluation/phrases.py)
    title = "LoCoMo"
    headline_phrase = "categories 1-4"
    matrix_headline = "categories 1-4, the adversarial ones apart"
    agreement_check = ("token F1 >= 0.5 (with the AUC: the chance that an answer judged correct overlaps the "
                       "gold more than one judged wrong)")
    model_free_check = "the conversations' grounding check"
    efficiency_title = "Efficiency and cost (GSW paper Table 3 shape)"
    # version 3's rules (list ordinals, a name's acronym) were found on LongMemEval's golds. Under 3
    # LoCoMo's 1,354 known-wrong answers and 58 labels get the verdicts they get under 2 (measured
    # 2026-12-06), so LoCoMo stayed on 2; 4 (issue 56: lists of clauses, the gold's leading words) moves it on
    current_grounding = 5
    answer_prompt_examples = EXAMPLES[2]  # the shipped prompt's; a run's own: answer_examples(its settings)
    # settings added after runs were saved without them: what their absence meant (upgrade layer);
    # format 3: the answer prompt's example in a turn of its own
    settings_history = (
        Introduced("judge_version", 1),
        Introduced("grounding_version", 1),
        Introduced("answer_prompt_version", 1, until_format=3),
    )

    @classmethod
    def upgrade_description(cls, desc: dict[str, Any], run_format: int) -> dict[str, Any]:
        """Format 0 left out the judge version (read from the judge prompt the description
        names; version 1 also scored category 5 by the judge) and the grounding version (1)."""
        out = dict(desc)
        if run_format < 1:
            version = {prompt: v for v, prompt in JUDGE_PROMPTS.items()}.get(str(out.get("judge_prompt")), 1)
            if not LoCoMoJudge.of(version).category_5_by_decline:
                out.setdefault("category_5", CATEGORY_5_BY_JUDGE)
            out.setdefault("judge_version", version)
            out.setdefault("grounding_version", 1)
        return out

    @classmethod
    def answer_examples(cls, settings: dict[str, Any]) -> tuple[str, ...]:
        """The example values of the answer prompt version a run was configured with."""
        return EXAMPLES[int(settings.get("answer_prompt_version", 1))]

    @staticmethod
    def judge_called(line: dict[str, Any]) -> bool:
        """Category 5 under judge version 2 is the decline check's verdict, not the judge's."""
        return not (int(line.get("category", 0)) == 5 and line.get("judge_prompt") == JUDGE_PROMPTS[2])

    def __init__(self, include_category_5: bool = False, resamples: int = 1000, seed: int = 0,
                 credit: str = "raw", judge_version: int = 2, grounding_version: int = 5,
                 answer_prompt_version: int = 2, verdicts: str = "judge"):
        """`verdicts`: "judge" (the configured judge model decides) or "published" (imported
        answers: each answer's own published verdict, datasets/answers_file.py, read instead of
        calling a judge; grounding still applies). Absent from the shipped config: only
        `memeval import-answers --verdicts published` sets it, so no saved run's name changes."""
        if verdicts not in VERDICT_SOURCES:
            raise ValueError(f"LoCoMo protocol.verdicts must be one of {VERDICT_SOURCES}, not {verdicts!r}")
        self.verdicts = verdicts
        if judge_version not in JUDGE_PROMPTS:
            raise ValueError(f"LoCoMo protocol.judge_version must be one of {sorted(JUDGE_PROMPTS)}, "
                             f"not {judge_version!r}")
        if grounding_version not in GROUNDING_VERSIONS:
            raise ValueError(f"LoCoMo protocol.grounding_version must be one of {sorted(GROUNDING_VERSIONS)}, "
                             f"not {grounding_version!r} (5 reads hyphenated, glued and acronym forms of gold words; 4 lists of clauses and the gold's leading words; 2 adds the subject check; 1: runs before 2026-12-01)")
        if answer_prompt_version not in ANSWER_PROMPT_VERSIONS:
            raise ValueError(f"LoCoMo protocol.answer_prompt_version must be one of {ANSWER_PROMPT_VERSIONS}, "
                             f"not {answer_prompt_version!r} (2: the example in a turn of its own; 1: inside "
                             "the instructions, runs configured before 2)")
        self.answer_prompt_version = answer_prompt_version
        self.grounding_version = grounding_version
        self.judge_version = judge_version
        # the configured versions as named behaviours, read by judging and grounding (behaviour.py)
        self.behaviour = LoCoMoBehaviour.from_versions(judge=judge_version, grounding=grounding_version,
                                                       answer_prompt=answer_prompt_version)
        self.judge_prompt = JUDGE_PROMPTS[judge_version] if verdicts == "judge" else PUBLISHED_PROMPT
        self.include_category_5 = bool(include_category_5)
        self.credit = check_credit(credit)
        self.resamples = resamples
        self.seed = seed

    def describe(self) -> dict[str, Any]:
        out = {"protocol": self.name, "version": self.version, "judge_prompt": self.judge_prompt,
               "answer_prompt": ANSWER_PROMPTS[self.answer_prompt_version], "include_category_5": self.include_category_5,
               "credit": self.credit, "grounding": GROUNDING_VERSIONS[self.grounding_version],
               "category_names": CATEGORY_NAMES,
               "category_5": CATEGORY_5_BY_DECLINE if self.behaviour.judge.category_5_by_decline else CATEGORY_5_BY_JUDGE,
               "judge_version": self.judge_version, "grounding_version": self.grounding_version}
        if self.verdicts != "judge":
            out["verdicts"] = self.verdicts
        return out

    def speakers(self, question: Question, dataset: Dataset | None) -> tuple[str, ...]:
        """Whom the subject check knows (version 2): the question's conversation's speakers."""
        if not self.behaviour.grounding.subject_check or dataset is None or question.corpus_id not in dataset.corpora:
            return ()
        return speakers_of(dataset.corpus_for(question))

    def answer_messages(self, question: Question, context_text: str) -> list[dict[str, str]]:
        return answer_messages(self.behaviour.answer_prompt, context_text, question.text)

    async def judge(self, question: Question, prediction: dict[str, Any], dataset: Dataset,
                    judge: ChatModel) -> dict[str, Any]:
        category = int(question.attrs["category"])
        adversarial = question.attrs.get("adversarial_answer", "") if category == 5 else None
        line: dict[str, Any] = {"question_id": question.id, "category": category,
                                "judge_prompt": self.judge_prompt}
        speakers = self.speakers(question, dataset)
        if category == 5 and self.behaviour.judge.category_5_by_decline:
            g = grounding(question.text, question.gold[0], category, prediction["answer"], speakers,
                          self.behaviour.grounding)
            ok = int(bool(g["grounded"]))
            return {**line, "label": "CORRECT" if ok else "WRONG", "correct": ok, "correct_grounded": ok,
                    **g, "reasoning": CATEGORY_5_BY_DECLINE, "judge_cached": None}
        if self.verdicts == "published":
            return {**line, **published_line(question, prediction, self.behaviour.grounding, speakers)}
        messages = judge_messages(question.text, question.gold[0], prediction["answer"], adversarial)
        try:
            verdict, result = await judge.complete_json(messages, Verdict, max_tokens=300)
        except JsonOutputError as exc:
            return {**line, "judge_error": str(exc), "judge_raw": exc.raw_outputs}
        return {**line, **grounded_verdict(question, prediction["answer"], verdict.label, speakers,
                                           self.behaviour.grounding),
                "reasoning": verdict.reasoning, "judge_cached": result.cached}

    # -- metrics ---------------------------------------------------------------------------
    def scored_rows(self, judgments: list[dict[str, Any]],
                    predictions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Per question: category, f1, bleu1, J raw / grounded / headline (NaN if the judge
        failed), evidence recall. Lines judged before grounding existed are grounded here."""
        verdicts = {j["question_id"]: j for j in judgments}
        rows = []
        for p in predictions:
            cat = int(p["category"])
            gold, answer = _gold(p), str(p.get("answer", ""))
            j = verdicts.get(p["question_id"], {})
            raw = grounded = math.nan
            if "correct" in j:
                raw = float(j["correct"])
                ok = j["grounded"] if "grounded" in j else grounding(p.get("question", ""), gold, cat, answer,
                                                                      rules=self.behaviour.grounding)["grounded"]
                grounded = float(raw and ok)
            rows.append({
                "question_id": p["question_id"], "category": cat,
                "f1": locomo_f1(answer, gold, cat), "bleu1": locomo_bleu1(answer, gold, cat),
                "judge": grounded if self.credit == "grounded" else raw,
                "judge_raw": raw, "judge_grounded": grounded,
                "evidence_recall": evidence_recall(p.get("gold_units", []), p.get("context_chapters", [])),
            })
        return rows

    def _aggregate(self, rows: list[dict[str, Any]], res: Resampling) -> dict[str, Any]:
        out: dict[str, Any] = {}
        clusters = res.labels([r["question_id"] for r in rows])
        for key in ("f1", "bleu1", "judge", "evidence_recall"):
            arr = np.array([r[key] for r in rows], dtype=float)
            out[key] = _mean(arr.tolist())
            out[f"{key}_std"] = bootstrap_std(len(arr), partial(mean_at, arr),
                                              self.resamples, self.seed, clusters)
        for key in ("judge_raw", "judge_grounded"):
            out[key] = _mean([r[key] for r in rows])
        out["n"] = len(rows)
        out["n_judged"] = sum(1 for r in rows if not math.isnan(r["judge"]))
        return out

    def metrics(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]],
                policy: str | None = None) -> dict[str, Any]:
        if policy is not None and policy not in POLICIES:
            raise ValueError(f"LoCoMo scoring policy must be one of {POLICIES}, not {policy!r}")
        with5 = policy == "categories_1_5" if policy else self.include_category_5
        rows = self.scored_rows(judgments, predictions)
        res = self.resampling(predictions)
        scope = self._scope(policy)
        cats = sorted({r["category"] for r in rows})
        failed = [j["question_id"] for j in judgments if "judge_error" in j]
        prompts = sorted({j.get("judge_prompt", "?") for j in judgments})
        in_scope = [r for r in rows if r["category"] in scope]
        return {
            "credit": self.credit,
            # how the verdicts line up with token F1 (F1 >= 0.5 agreement, AUC); see grounding.py
            "judge_f1": {c: f1_agreement((r[f"judge_{c}"], r["f1"]) for r in in_scope) for c in ("raw", "grounded")},
            "grounding_removed": sum(1 for r in rows if r["judge_raw"] == 1 and r["judge_grounded"] == 0),
            "overall": self._aggregate(in_scope, res),
            "categories": {str(c): self._aggregate([r for r in rows if r["category"] == c], res) for c in cats},
            "category_names": dict(CATEGORY_NAMES),
            "overall_categories": scope,
            "policy": "categories_1_5" if with5 else "categories_1_4",
            "judge_prompt": prompts[0] if len(prompts) == 1 else prompts,
            "n_judge_failed": len(failed), "judge_failed_ids": failed,
        }

    def _scope(self, policy: str | None) -> list[int]:
        with5 = policy == "categories_1_5" if policy else self.include_category_5
        return [1, 2, 3, 4, 5] if with5 else [1, 2, 3, 4]

    def headline_scores(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]],
                        policy: str | None = None) -> dict[str, float]:
        """Per-question J of the categories the overall covers (the policy's), judged ones only."""
        scope = self._scope(policy)
        return {r["question_id"]: r["judge"] for r in self.scored_rows(judgments, predictions)
                if r["category"] in scope and not math.isnan(r["judge"])}

    def headline_questions(self, predictions: list[dict[str, Any]]) -> set[str]:
        """Categories the overall covers (1-4 under the default policy: a decline scores on category
        5, so averaging it in ranks a method that declines everything first)."""
        scope = self._scope(None)
        return {p["question_id"] for p in predictions if p.get("category") is None or int(p["category"]) in scope}

    def resampling(self, predictions: list[dict[str, Any]]) -> Resampling:
        """A cluster bootstrap over conversations when the run holds 2+; one conversation's
        questions are resampled as questions, with a note that this understates the uncertainty.
        Predictions that name no conversation (hand-made ones) are resampled as questions."""
        conv = {p["question_id"]: str(p["corpus_id"]) for p in predictions if p.get("corpus_id") is not None}
        n = len(set(conv.values()))
        if len(conv) < len(predictions):
            return Resampling("question", len({p["question_id"] for p in predictions}))
        if n >= 2:
            return Resampling("conversation", n, conv)
        return Resampling("question", len(conv), note=ONE_CONVERSATION if n == 1 else None)

    def question_scores(self, judgments: list[dict[str, Any]],
                        predictions: list[dict[str, Any]]) -> dict[str, float]:
        """Per-question headline J (under the configured credit), for paired comparisons."""
        return {r["question_id"]: r["judge"] for r in self.scored_rows(judgments, predictions)
                if not math.isnan(r["judge"])}

    def group_caveats(self, metrics: dict[str, Any]) -> dict[str, str]:
        """Under judge version 2 category 5's "J" is the model-free decline check, not a judge
        verdict; the overall cell says so when category 5 is in it."""
        if metrics.get("judge_prompt") != JUDGE_PROMPTS[2]:
            return {}
        out = {"5": "decline check, not J"}
        if 5 in (metrics.get("overall_categories") or []):
            out["overall"] = "category 5 by the decline check"
        return out

    def presentation(self) -> Presentation:
        """J by category; per question, the verdict under the configured credit (computed)."""
        return PRESENTATION

    # -- table -----------------------------------------------------------------------------
    def table(self, metrics: dict[str, Any], meta: dict[str, Any]) -> str:
        scope = "-".join(map(str, (metrics["overall_categories"][0], metrics["overall_categories"][-1])))
        credit = metrics.get("credit", "raw")
        policy = (f"LoCoMo J (judge {metrics['judge_prompt']}, {credit} credit), token F1 (stemmed, official "
                  f"per-category rules), BLEU-1; overall = categories {scope}")
        names = metrics["category_names"]

        def row(label: str, m: dict[str, Any]) -> str:
            return (f"| {label} | {m['n']} | {fmt(m['judge'])} ± {fmt(m['judge_std'])} | "
                    f"{fmt(m['f1'])} ± {fmt(m['f1_std'])} | {fmt(m['bleu1'])} ± {fmt(m['bleu1_std'])} | "
                    f"{fmt(m['evidence_recall'])} |")

        lines = [provenance_header(meta, policy), header_line("locomo", meta, metrics["judge_prompt"], credit), "",
                 f"method: **{meta.get('method', '?')}**; mean context tokens: "
                 f"{meta.get('mean_context_tokens', '?')}; cost USD: {meta.get('cost_usd', '?')}", "",
                 f"| category | n | J ({credit} credit) ± std | F1 ± std | BLEU-1 ± std | evidence recall |",
                 "|---|---|---|---|---|---|"]
        for c, m in metrics["categories"].items():
            lines.append(row(f"{c} {names.get(c, '?')}", m))
        lines.append(row(f"**overall ({scope})**", metrics["overall"]))
        mapping = ", ".join(f"{k} = {v}" for k, v in names.items())
        by_decline = (" J column: the model-free decline check, no judge call (judge version 2)."
                      if metrics.get("judge_prompt") == JUDGE_PROMPTS[2] else "")
        lines += ["", f"Category mapping: {mapping}. Category 5 is correct when the reply says the "
                  f"conversation does not mention it (F1 column: the official substring rule).{by_decline}",
                  f"± = bootstrap std over {_unit(metrics)}s ({self.resamples} resamples). Evidence recall = "
                  "share of the question's evidence sessions present in the context."]
        lines += conversation_notes(metrics, "J")
        if metrics.get("n_judge_failed"):
            lines.append(f"Judge failed on {metrics['n_judge_failed']} question(s): excluded from J, not scored 0.")
        return "\n".join(lines) + "\n"
