"""The conversation benchmarks' judge meta-evaluation (LoCoMo, LongMemEval): hand-labelled
CORRECT/WRONG answers scored as raw, grounded, grounding_only and token_f1. The command is
`memeval judge-check --dataset locomo|longmemeval` (cli/judge_check.py), which builds the judge
and the protocol from the run config.

The label files (judge_meta/locomo_labels.jsonl, judge_meta/longmemeval_labels.jsonl) hold
answers written by hand for real questions, each labelled CORRECT (1) or WRONG (0) by a person;
question text and gold answers are joined from the data at run time. Every answer is judged
exactly as a run judges it (the protocol's own judge call), then scored four ways:

- raw: the judge's verdict (the papers' protocol);
- grounded: that verdict after the grounding check (conversations/grounding.py);
- grounding_only: the grounding check alone as a judge (no model): CORRECT iff grounded;
- token_f1: CORRECT iff the answer's token F1 against the gold is >= 0.5 (no model; LoCoMo's
  official per-category F1, plain token F1 on LongMemEval; abstention and preference answers
  have no gold answer to overlap, so this baseline calls them CORRECT iff they decline).

Accuracy is the share of labels a configuration reproduces; false CORRECT counts WRONG answers
it accepted, and the false-accept rate is their share of the answers labelled WRONG (the
label set's counterpart of the known-wrong check's rate).
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memeval.datasets.types import Dataset, Question
from memeval.model_access.errors import ModelCallError

from ..agreement import cohen_kappa
from ..labels import META, category_lines, labelled_questions
from ..protocol import Protocol, fmt
from .behaviour import ConversationGrounding
from .grounding import F1_THRESHOLD, declines
from .locomo import grounding as locomo_grounding
from .locomo import speakers_of
from .longmemeval import grounding as lme_grounding
from .longmemeval import judge_kind, reply_f1
from .text_overlap import locomo_f1

LABELS = {"locomo": META / "locomo_labels.jsonl", "longmemeval": META / "longmemeval_labels.jsonl"}
CONFIGS = ("raw", "grounded", "grounding_only", "token_f1")
DETERMINISTIC = ("grounding_only", "token_f1")


@dataclass
class Case:
    """One labelled answer joined with its question."""

    label: dict[str, Any]
    question: Question
    results: dict[str, int | None] = field(default_factory=dict)
    speakers: tuple[str, ...] = ()  # LoCoMo: the conversation's two speakers (the subject check)


def load_dataset(name: str, data_dir: str) -> Dataset:
    if name == "locomo":
        from memeval.datasets.locomo import LoCoMoLoader

        return LoCoMoLoader(data_dir).load()
    from memeval.datasets.longmemeval import LongMemEvalLoader

    return LongMemEvalLoader("oracle", data_dir).load()


def load_cases(labels_path: Path, dataset: Dataset) -> list[Case]:
    """Join labels to the dataset; refuse a label naming an unknown question or a bad verdict."""
    cases = []
    for label, q in labelled_questions(labels_path, dataset):
        if label.get("correct") not in (0, 1):
            raise ValueError(f"label {label['id']}: 'correct' must be 0 or 1, not {label.get('correct')!r}")
        corpus = dataset.corpora.get(q.corpus_id)
        cases.append(Case(label, q, speakers=speakers_of(corpus) if corpus and "category" in q.attrs else ()))
    return cases


def run_deterministic(cases: list[Case], dataset: str, grounding_version: ConversationGrounding | int = 2) -> None:
    """The two judge-free configurations (grounding under the protocol's grounding, behaviour.py)."""
    rules = ConversationGrounding.of(grounding_version)
    for c in cases:
        q, answer = c.question, c.label["answer"]
        if dataset == "locomo":
            cat = int(q.attrs["category"])
            speakers = c.speakers if rules.subject_check else ()
            c.results["grounding_only"] = int(locomo_grounding(q.text, q.gold[0], cat, answer, speakers,
                                                               rules)["grounded"])
            c.results["token_f1"] = int(locomo_f1(answer, q.gold[0], cat) >= F1_THRESHOLD)
            continue
        kind = judge_kind(q.attrs["question_type"], bool(q.attrs.get("is_abstention")))
        c.results["grounding_only"] = int(lme_grounding(kind, q.text, q.gold[0], answer, rules)["grounded"])
        f1 = reply_f1(kind, q.gold[0], answer)
        c.results["token_f1"] = int(declines(answer) if kind == "abstention" else
                                    not declines(answer) if math.isnan(f1) else f1 >= F1_THRESHOLD)


async def run_judge(cases: list[Case], protocol: Protocol, dataset: Dataset, judge: Any, concurrency: int) -> None:
    """Judge every answer with the protocol's own judge call; a failure leaves the result None."""
    sem = asyncio.Semaphore(concurrency)

    async def one(c: Case) -> None:
        async with sem:
            try:
                line = await protocol.judge(c.question, {"answer": c.label["answer"]}, dataset, judge)
            except ModelCallError as exc:  # e.g. an uncached call under --replay: a judge failure
                line = {"judge_error": str(exc)}
        ok = "correct" in line
        c.results["raw"] = line["correct"] if ok else None
        c.results["grounded"] = line["correct_grounded"] if ok else None

    await asyncio.gather(*(one(c) for c in cases))


def score_config(cases: list[Case], name: str) -> dict[str, Any]:
    truth = [c.label["correct"] for c in cases]
    got = [c.results.get(name) for c in cases]
    ok = [(t, g) for t, g in zip(truth, got, strict=True) if g is not None]
    n = len(truth)
    return {
        "n": n, "accuracy": sum(t == g for t, g in ok) / n if n else math.nan,  # a failure is never right
        "kappa": cohen_kappa([t for t, _ in ok], [g for _, g in ok]),
        "false_correct": sum(1 for t, g in ok if g == 1 and t == 0),
        "missed_correct": sum(1 for t, g in ok if g == 0 and t == 1),
        # of the answers labelled WRONG (a failure accepts nothing), the share credited CORRECT
        "false_accept_rate": (sum(1 for t, g in ok if g == 1 and t == 0) / truth.count(0)) if 0 in truth else math.nan,
        "judge_failed": n - len(ok),
    }


def report(cases: list[Case], configs: list[str], judge_name: str, dataset: str) -> tuple[str, dict[str, Any]]:
    overall = {name: score_config(cases, name) for name in configs}
    cats = sorted({c.label["category"] for c in cases})
    by_cat = {cat: {name: score_config([c for c in cases if c.label["category"] == cat], name) for name in configs}
              for cat in cats}
    n_correct = sum(c.label["correct"] for c in cases)
    lines = [f"Judge meta-evaluation ({dataset}): {len(cases)} labelled answers ({n_correct} CORRECT); "
             f"judge: {judge_name}", "",
             "| configuration | accuracy | kappa | false CORRECT | false-accept rate | missed CORRECT | judge failures |",
             "|---|---|---|---|---|---|---|"]
    for name in configs:
        m = overall[name]
        lines.append(f"| {name} | {fmt(m['accuracy'])} | {fmt(m['kappa'])} | {m['false_correct']} | "
                     f"{fmt(m['false_accept_rate'])} | {m['missed_correct']} | {m['judge_failed']} |")
    lines += category_lines("Accuracy by answer category:", cases, configs, by_cat)
    return "\n".join(lines), {"dataset": dataset, "judge": judge_name, "overall": overall, "by_category": by_cat}
