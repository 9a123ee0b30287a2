"""Score judge configurations against hand-labelled answers (the judge meta-evaluation set).

    python -m evaluation.judge_check                         # the local judge (conf/judge/local.yaml)
    python -m evaluation.judge_check --judge local_small
    python -m evaluation.judge_check --judge openai_compatible --override judge.base_url=http://...
    python -m evaluation.judge_check --deterministic-only    # no model: the matcher alone
    python -m evaluation.judge_check --dataset locomo        # LoCoMo / LongMemEval: conversation_judge_check.py

Every number in a results table passes through the judge, so the judge itself gets a test set:
answers written by hand for real EpBench questions (correct, partial, refusal, hallucinated list,
over-long list, paraphrase, other date formats), each with the right credit per gold item. The
label file holds question ids, answers and credits only; question text and gold items are
joined from the data at run time. Configurations: raw (the official one-pass judge), grounded
(its credit after the grounding check), two_pass (+ grounded) and the deterministic matcher.
Accuracy is the share of labelled gold-item credits (0 / 0.5 / 1) a configuration reproduces
exactly. The last line printed is `deterministic matcher accuracy: A`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasets.epbench import EpBenchLoader
from datasets.types import Dataset, Question

from .agreement import cohen_kappa
from .deterministic_matcher import match_answer
from .epbench_judge import judge_one, judge_two_pass
from .epbench_scoring import dedupe_gold, score_question
from .epbench_universe import KIND_BY_RETRIEVAL, Universe, load_universe
from .grounding import ground
from .protocol import fmt

ROOT = Path(__file__).resolve().parents[1]
LABELS = Path(__file__).parent / "judge_meta" / "epbench20_labels.jsonl"
CONFIGS = ("raw", "grounded", "two_pass", "two_pass_grounded", "deterministic")


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


def labelled_questions(labels_path: Path, dataset: Dataset) -> Iterator[tuple[dict[str, Any], Question]]:
    """Each label of a JSONL label file with its question; a label naming an unknown question is
    refused (both judge checks read their label sets through this)."""
    by_id = {q.id: q for q in dataset.questions}
    for line in labels_path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        label = json.loads(line)
        q = by_id.get(label["question_id"])
        if q is None:
            raise ValueError(f"label {label['id']}: unknown question {label['question_id']} in {labels_path}")
        yield label, q


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


def run_matcher(cases: list[Case], universe: Universe) -> None:
    for c in cases:
        r = match_answer(c.question.text, c.question.attrs["retrieval_type"], c.gold, c.label["answer"], universe)
        c.results["deterministic"] = (r.matching_score, len(r.identified_items)) if r else None


def _grounded(c: Case, raw: dict[str, Any], universe: Universe) -> tuple[list[float], int]:
    gold, scores = dedupe_gold(list(c.question.gold), raw["matching_score_raw"])
    g = ground(c.label["answer"], gold, scores, raw["identified_items"], c.kind,
               universe.values(c.kind), universe.generic_event_words, c.question.text)
    return g.matching_score, g.n_pred


async def run_judge(cases: list[Case], judge: Any, universe: Universe, concurrency: int) -> None:
    """One-pass and two-pass judging of every case; a judge failure leaves the result None."""
    sem = asyncio.Semaphore(concurrency)

    async def one(c: Case) -> None:
        async with sem:
            q, answer = c.question, c.label["answer"]
            one_pass = await judge_one(judge, q.text, list(q.gold), answer, c.chapter_text)
            two = one_pass if c.chapter_text is not None else await judge_two_pass(judge, q.text, list(q.gold), answer)
        for name, raw in (("raw", one_pass), ("two_pass", two)):
            if "judge_error" in raw:
                c.results[name] = c.results[f"{name}_grounded" if name == "two_pass" else "grounded"] = None
                continue
            c.results[name] = (dedupe_gold(list(q.gold), raw["matching_score_raw"])[1], len(raw["identified_items"]))
            c.results["grounded" if name == "raw" else "two_pass_grounded"] = _grounded(c, raw, universe)

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
        "f1_mae": sum(f1_err) / len(f1_err) if f1_err else math.nan, "n_answers": len(f1_err) + failed,
        "judge_failed": failed,
    }


def report(cases: list[Case], configs: list[str], judge_name: str) -> tuple[str, dict[str, Any]]:
    """The printed tables (overall, by category) and the same numbers as a dict."""
    overall = {name: score_config(cases, name) for name in configs}
    cats = sorted({c.label["category"] for c in cases})
    by_cat = {cat: {name: score_config(cases, name, lambda c, cat=cat: c.label["category"] == cat)
                    for name in configs} for cat in cats}
    lines = [f"Judge meta-evaluation: {len(cases)} labelled answers, "
             f"{overall[configs[0]]['n_credits']} gold-item credits; judge: {judge_name}", "",
             "| configuration | credit accuracy | kappa | false credits | missed credits | F1 abs. error | judge failures |",
             "|---|---|---|---|---|---|---|"]
    for name in configs:
        m = overall[name]
        lines.append(f"| {name} | {fmt(m['accuracy'])} | {fmt(m['kappa'])} | {m['false_credit']} | "
                     f"{m['missed_credit']} | {fmt(m['f1_mae'])} | {m['judge_failed']} |")
    lines += category_lines("Credit accuracy by answer category:", cases, configs, by_cat)
    return "\n".join(lines), {"judge": judge_name, "overall": overall, "by_category": by_cat}


def category_lines(title: str, cases: list, configs: list[str], by_cat: dict[str, dict]) -> list[str]:
    """The per-answer-category accuracy table both judge checks print (cases carry label["category"])."""
    lines = ["", title, "", "| category | answers | " + " | ".join(configs) + " |",
             "|---|---|" + "---|" * len(configs)]
    for cat in sorted(by_cat):
        n = sum(1 for c in cases if c.label["category"] == cat)
        lines.append(f"| {cat} | {n} | " + " | ".join(fmt(by_cat[cat][k]["accuracy"]) for k in configs) + " |")
    return lines


def _build_judge(name: str, overrides: list[str], data_dir: str, cache_path: str | None,
                 replay: bool = False) -> tuple[Any, Any]:
    """The judge ChatModel exactly as a run builds it, and the server pool it needs (or None)."""
    from hydra import compose, initialize_config_dir
    from hydra.utils import instantiate

    from harness.resolvers import register_resolvers
    from model_access.cache import ResponseCache
    from model_access.usage import UsageLedger

    register_resolvers()
    try:  # the run schema, where the harness defines one (conf/config.yaml lists it)
        from harness.schema import register_schemas

        register_schemas()
    except ImportError:
        pass
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[f"judge={name}", f"data_dir={data_dir}", *overrides])
    cache = ResponseCache(cache_path or cfg.cache_path)
    judge = instantiate(cfg.judge, _partial_=True)(cache=cache, ledger=UsageLedger())
    pool = None
    if replay:  # cache hits only: an uncached call meets a closed port and is recorded as a failure
        judge.server, judge.base_url, judge.max_attempts = None, "http://127.0.0.1:9/v1", 1
    if judge.server is not None:
        from model_access.local_server import LocalServerPool

        pool = LocalServerPool()
        judge.base_url = pool.start(judge.server)
    judge.check_ready()
    return judge, pool


def _default_data_dir() -> str:
    import os

    for cand in (os.environ.get("MEMEVAL_DATA"), ROOT / "data", ROOT.parent / "shared" / "data"):
        if cand and (Path(cand) / "epbench").exists():
            return str(cand)
    return "data"


def main(argv: list[str] | None = None) -> int:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--dataset", default="epbench")
    if pre.parse_known_args(argv)[0].dataset != "epbench":  # the conversation label sets
        from .conversation_judge_check import main as conversation_main

        return conversation_main(argv)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", choices=("epbench", "locomo", "longmemeval"), default="epbench",
                    help="which label set: EpBench-20 (this module) or a conversation benchmark")
    ap.add_argument("--judge", default="local", help="a conf/judge/*.yaml name (default: local)")
    ap.add_argument("--override", nargs="*", default=[], help="extra Hydra overrides, e.g. judge.base_url=...")
    ap.add_argument("--deterministic-only", action="store_true", help="score the matcher alone (no model)")
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--cache", default=None, help="response cache (default: the config's cache_path)")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--replay", action="store_true",
                    help="rescore from the response cache without starting a local server")
    ap.add_argument("--every", type=int, default=1, help="judge every k-th label only (a slow local judge)")
    ap.add_argument("--offset", type=int, default=0, help="with --every: start at this label (0-based)")
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = ap.parse_args(argv)
    data_dir = args.data_dir or _default_data_dir()
    dataset = EpBenchLoader(20, data_dir).load()
    universe = load_universe(data_dir, 20)
    cases = load_cases(args.labels, dataset)[args.offset::max(1, args.every)]
    run_matcher(cases, universe)
    configs = ["deterministic"]
    judge_name = "none (deterministic matcher only)"
    if not args.deterministic_only:
        judge, pool = _build_judge(args.judge, args.override, data_dir, args.cache, args.replay)
        judge_name = f"{judge.display_name} (conf judge={args.judge})"
        try:
            asyncio.run(run_judge(cases, judge, universe, args.concurrency))
        finally:
            judge.cache.close()
            if pool is not None:
                pool.close()
        configs = list(CONFIGS)
    text, numbers = report(cases, configs, judge_name)
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=1, default=str))
    print(text)
    print(f"\ndeterministic matcher accuracy: {numbers['overall']['deterministic']['accuracy']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
