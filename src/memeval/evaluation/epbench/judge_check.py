"""The EpBench judge meta-evaluation: hand-labelled answers scored under each judge configuration
(raw, grounded, two_pass, two_pass_grounded, deterministic). The command is
`memeval judge-check --dataset epbench` (cli/judge_check.py), which builds the judge and the
protocol from the run config.

Every number in a results table passes through the judge, so the judge itself gets a test set:
answers written by hand for real EpBench questions (correct, partial, refusal, hallucinated list,
over-long list, paraphrase, other date formats), each with the right credit per gold item. The
label file holds question ids, answers and credits only; question text and gold items are
joined from the data at run time. Configurations: raw (the official one-pass judge), grounded
(its credit after the grounding check), two_pass (+ grounded) and the deterministic matcher.
Accuracy is the share of labelled gold-item credits (0 / 0.5 / 1) a configuration reproduces
exactly. `grounding_only` needs no model: grounding applied to a judge that claims and credits
every gold item (the most generous judge there is), so it measures what grounding alone lets
through; both grounded configurations use the protocol's grounding version.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from memeval.datasets.types import Dataset, Question
from memeval.model_access.errors import ModelCallError

from ..agreement import cohen_kappa
from ..labels import META, category_lines, labelled_questions
from ..protocol import fmt
from .behaviour import EpBenchGrounding, EpBenchJudge
from .grounding import ground
from .judge import judge_one, judge_two_pass
from .matcher import checks, match_answer
from .scoring import dedupe_gold, score_question
from .universe import KIND_BY_RETRIEVAL, Universe

LABELS = META / "epbench20_labels.jsonl"
CONFIGS = ("raw", "grounded", "two_pass", "two_pass_grounded", "grounding_only", "deterministic")
DETERMINISTIC = ("grounding_only", "deterministic")


@dataclass
class Case:
    """One labelled answer joined with its question."""

    label: dict[str, Any]
    question: Question
    gold: list[str]
    chapter_text: str | None
    results: dict[str, tuple[list[float], int] | None] = field(default_factory=dict)

    @property
    def kind(self) -> str | None:
        return KIND_BY_RETRIEVAL.get(self.question.attrs["retrieval_type"])


def load_cases(labels_path: Path, dataset: Dataset) -> list[Case]:
    """Join labels to the dataset; refuse labels whose credit list does not fit the gold list."""
    cases = []
    for label, q in labelled_questions(labels_path, dataset):
        gold = list(dict.fromkeys(q.gold))
        if len(label["credit"]) != len(gold):
            raise ValueError(f"label {label['id']}: {len(label['credit'])} credits for {len(gold)} gold items")
        chapter = None
        if q.attrs["retrieval_type"] == "Full event details" and q.gold_units:
            chapter = dataset.corpus_for(q).unit(q.gold_units[0]).text
        cases.append(Case(label, q, gold, chapter))
    return cases


def run_matcher(cases: list[Case], universe: Universe, grounding_version: EpBenchGrounding | int = 2) -> None:
    """The judge-free configurations: the matcher, and grounding over a credit-everything judge."""
    grounding = EpBenchGrounding.of(grounding_version)
    for c in cases:
        r = match_answer(c.question.text, c.question.attrs["retrieval_type"], c.gold, c.label["answer"], universe)
        c.results["deterministic"] = (r.matching_score, len(r.identified_items)) if r else None
        everything = {"matching_score_raw": [1.0] * len(c.question.gold), "identified_items": list(c.gold)}
        c.results["grounding_only"] = _grounded(c, everything, universe, grounding)


def _grounded(c: Case, raw: dict[str, Any], universe: Universe,
              rules: EpBenchGrounding) -> tuple[list[float], int]:
    """The grounded credit and claim count a run's judgments line gets under grounding `rules`
    (from version 3 on, the claim floors live in matcher.checks, so the check reads them there)."""
    gold, scores = dedupe_gold(list(c.question.gold), raw["matching_score_raw"])
    if rules.grounds_by_evidence:
        line = checks(c.question.text, c.question.attrs["retrieval_type"], gold, scores, raw["identified_items"],
                      c.label["answer"], universe, rules)
        return line["matching_score_grounded"], line["n_pred_grounded"]
    g = ground(c.label["answer"], gold, scores, raw["identified_items"], c.kind,
               universe.values(c.kind), universe.generic_event_words, c.question.text)
    return g.matching_score, g.n_pred


async def run_judge(cases: list[Case], judge: Any, universe: Universe, concurrency: int,
                    judge_version: EpBenchJudge | int, grounding_version: EpBenchGrounding | int = 2) -> None:
    """One-pass and two-pass judging of every case under the protocol's judge (behaviour.py),
    grounded under its grounding; a judge failure leaves the result None."""
    judge_rules, grounding = EpBenchJudge.of(judge_version), EpBenchGrounding.of(grounding_version)
    sem = asyncio.Semaphore(concurrency)

    async def one(c: Case) -> None:
        async with sem:
            q, answer = c.question, c.label["answer"]
            try:
                one_pass = await judge_one(judge, q.text, list(q.gold), answer, c.chapter_text, judge_rules,
                                           question_type=q.attrs["retrieval_type"])  # version 3 reads it
                two = one_pass if c.chapter_text is not None else await judge_two_pass(
                    judge, q.text, list(q.gold), answer, judge_rules)
            except ModelCallError as exc:  # e.g. --replay of a call not in the cache: a counted failure
                one_pass = two = {"judge_error": str(exc)}
        for name, raw in (("raw", one_pass), ("two_pass", two)):
            if "judge_error" in raw:
                c.results[name] = c.results[f"{name}_grounded" if name == "two_pass" else "grounded"] = None
                continue
            c.results[name] = (dedupe_gold(list(q.gold), raw["matching_score_raw"])[1], len(raw["identified_items"]))
            c.results["grounded" if name == "raw" else "two_pass_grounded"] = _grounded(c, raw, universe, grounding)

    await asyncio.gather(*(one(c) for c in cases))


def score_config(cases: list[Case], name: str, select: Callable[[Case], bool] = lambda c: True) -> dict[str, Any]:
    """Credit accuracy, kappa, false and missed credits, and F1 error against the labels."""
    truth: list[float] = []
    got: list[float] = []
    f1_err: list[float] = []
    failed = 0
    for c in cases:
        if not select(c):
            continue
        res = c.results.get(name)
        labelled = [float(x) for x in c.label["credit"]]
        if res is None:
            failed += 1
            truth += labelled
            got += [math.nan] * len(labelled)  # a failure gets nothing right
            continue
        scores, n_pred = res
        truth += labelled
        got += [float(x) for x in scores]
        want = score_question(len(labelled), labelled, c.label["n_items"]).f1
        f1_err.append(abs(score_question(len(scores), scores, n_pred).f1 - want))
    n = len(truth)
    right = sum(t == g for t, g in zip(truth, got, strict=True))
    ok = [(t, g) for t, g in zip(truth, got, strict=True) if not math.isnan(g)]
    return {
        "n_credits": n, "accuracy": right / n if n else math.nan,
        "kappa": cohen_kappa([t for t, _ in ok], [g for _, g in ok]),
        "false_credit": sum(1 for t, g in ok if g > t), "missed_credit": sum(1 for t, g in ok if g < t),
        # of the gold items labelled uncredited (0), the share the configuration credits at all
        "false_accept_rate": (sum(1 for t, g in ok if t == 0 and g > 0) / truth.count(0.0)) if 0.0 in truth else math.nan,
        "f1_mae": sum(f1_err) / len(f1_err) if f1_err else math.nan, "n_answers": len(f1_err) + failed,
        "judge_failed": failed,
    }


def _in_category(category: str, case: Case) -> bool:
    return case.label["category"] == category


def report(cases: list[Case], configs: list[str], judge_name: str) -> tuple[str, dict[str, Any]]:
    """The printed tables (overall, by category) and the same numbers as a dict."""
    overall = {name: score_config(cases, name) for name in configs}
    cats = sorted({c.label["category"] for c in cases})
    by_cat = {cat: {name: score_config(cases, name, partial(_in_category, cat))
                    for name in configs} for cat in cats}
    lines = [f"Judge meta-evaluation: {len(cases)} labelled answers, "
             f"{overall[configs[0]]['n_credits']} gold-item credits; judge: {judge_name}", "",
             "| configuration | credit accuracy | kappa | false credits | false-accept rate | missed credits | F1 abs. error "
             "| judge failures |",
             "|---|---|---|---|---|---|---|---|"]
    for name in configs:
        m = overall[name]
        lines.append(f"| {name} | {fmt(m['accuracy'])} | {fmt(m['kappa'])} | {m['false_credit']} | "
                     f"{fmt(m['false_accept_rate'])} | {m['missed_credit']} | {fmt(m['f1_mae'])} | {m['judge_failed']} |")
    lines += category_lines("Credit accuracy by answer category:", cases, configs, by_cat)
    lines += category_lines("F1 abs. error by answer category (a 0-cue answer has no credit to get right, only "
                            "its claims to count):", cases, configs, by_cat, "f1_mae")
    return "\n".join(lines), {"judge": judge_name, "overall": overall, "by_category": by_cat}
