"""The judge-sensitivity matrix: several runs' saved answers re-judged under every criterion.

Each run folder is read as the score stage reads it (its config through the upgrade module);
its answers are judged again by one judge for all runs, so the criteria differ and nothing else.
The `strict` criterion is the run's own protocol at its current grounding version, grounded credit,
whose judge calls are the run's own (free when its calls are in the cache); the LLM criteria
(criteria.py) make one call per answer, cached like every call; `model_free` makes none. A
method's score under a criterion is its mean per-question score over the questions every run
answered that the protocol's headline counts (LoCoMo: categories 1-4, not the adversarial
ones, where a decline scores); the rank correlation of two criteria is Kendall's tau (scipy,
tau-b) between the methods' scores under each.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.utils import get_class, instantiate
from omegaconf import DictConfig

from memeval.datasets.types import Dataset, Question
from memeval.model_access.errors import JsonOutputError, ModelCallError

from ..adapters import JudgeMatrixFamily, judge_matrix_family
from ..protocol import Protocol
from ..runs.folder import RunFolder
from ..runs.health_file import NOT_CHECKED, mark_of, read_health
from ..runs.upgrade import read_config, read_meta
from ..verdict import Verdict
from .criteria import CRITERIA, LLM_CRITERIA, PROMPT_VERSION, messages

FORMAT = 3  # 2: each run's answering model, health and strict grounding version; 3: headline questions only


@dataclass
class RunInput:
    """One run folder, ready to re-judge."""

    path: Path
    label: str
    dataset: Dataset
    protocol: Protocol  # the strict criterion's: the current grounding version, grounded credit
    family: JudgeMatrixFamily
    predictions: list[dict[str, Any]]
    questions: dict[str, Question] = field(default_factory=dict)
    answer_model: str = "–"
    health: str = NOT_CHECKED  # its health.json's status and first failing message


def strict_protocol(cfg: DictConfig) -> Protocol:
    """The run's protocol with the project's strict credit (its current grounding version where it has one)."""
    node = cfg.dataset.protocol
    if "credit" in node:
        node.credit = "grounded"
    current = getattr(get_class(str(node._target_)), "current_grounding", None)
    if "grounding_version" in node and current is not None:
        node.grounding_version = current
    return instantiate(node)


def load_run(path: Path, data_dir: str | None = None) -> RunInput:
    """A run folder's dataset, strict protocol and saved answers (`data_dir` replaces the saved
    config's data folder, which is relative to where the run was made)."""
    cfg = read_config(path)
    for node in (cfg.dataset.loader, cfg.dataset.protocol):
        if data_dir is not None and "data_dir" in node:
            node.data_dir = data_dir
    dataset = instantiate(cfg.dataset.loader).load()
    protocol = strict_protocol(cfg)
    predictions = [p for p in RunFolder(path).read_jsonl("predictions.jsonl") if "answer" in p]
    by_id = {q.id: q for q in dataset.questions}
    missing = [p["question_id"] for p in predictions if p["question_id"] not in by_id]
    if missing:
        raise ValueError(f"{path}: {len(missing)} answered questions are not in the dataset (first: {missing[0]})")
    meta = read_meta(path)
    return RunInput(path, str(meta.get("method") or path.name), dataset, protocol, judge_matrix_family(protocol), predictions,
                    {p["question_id"]: by_id[p["question_id"]] for p in predictions},
                    str(meta.get("answer_model") or "–"), mark_of(read_health(path)))


async def _verdict(judge: Any, msgs: list[dict[str, str]]) -> float:
    try:
        verdict, _ = await judge.complete_json(msgs, Verdict, max_tokens=300)
    except (JsonOutputError, ModelCallError):
        return math.nan  # a judge failure: left out of the mean, counted apart
    return float(verdict.label == "CORRECT")


async def rejudge(run: RunInput, ids: list[str], judge: Any, concurrency: int = 4,
                  criteria: tuple[str, ...] = tuple(CRITERIA)) -> dict[str, dict[str, float]]:
    """criterion -> question id -> score (NaN where the judge failed) for one run."""
    sem = asyncio.Semaphore(concurrency)
    preds = {p["question_id"]: p for p in run.predictions}
    out: dict[str, dict[str, float]] = {c: {} for c in criteria}
    lines: list[dict[str, Any]] = []

    async def one(qid: str) -> None:
        q, p = run.questions[qid], preds[qid]
        answer = str(p.get("answer", ""))
        if "model_free" in criteria:
            out["model_free"][qid] = run.family.model_free(q, answer, run.dataset, run.protocol)
        async with sem:
            if "strict" in criteria:
                try:
                    lines.append(await run.protocol.judge(q, p, run.dataset, judge))
                except ModelCallError as exc:
                    lines.append({"question_id": qid, "judge_error": str(exc)})
            qtype = run.family.question_type(q, run.dataset)
            for c in (c for c in LLM_CRITERIA if c in criteria):
                msgs = messages(c, qtype, q.text, run.family.reference(q, run.dataset), answer)
                out[c][qid] = await _verdict(judge, msgs)

    await asyncio.gather(*(one(qid) for qid in ids))
    if "strict" in criteria:
        scored = run.protocol.question_scores(lines, [preds[i] for i in ids])
        out["strict"] = {qid: scored.get(qid, math.nan) for qid in ids}
    return out


def _mean(values: list[float]) -> float:
    ok = [v for v in values if not math.isnan(v)]
    return sum(ok) / len(ok) if ok else math.nan


def kendall(a: list[float], b: list[float]) -> tuple[float, float]:
    """Kendall's tau-b and its p-value between two criteria's method scores (NaN if undefined)."""
    from scipy.stats import kendalltau

    pairs = [(x, y) for x, y in zip(a, b, strict=True) if not (math.isnan(x) or math.isnan(y))]
    if len(pairs) < 2:
        return math.nan, math.nan
    res = kendalltau([x for x, _ in pairs], [y for _, y in pairs])
    return float(res.statistic), float(res.pvalue)


def summarize(runs: list[RunInput], per_question: list[dict[str, dict[str, float]]], ids: list[str],
              criteria: tuple[str, ...], judge_name: str, calls: dict[str, int],
              every: int = 1) -> dict[str, Any]:
    """The matrix artifact (judge_matrix.json): scores, rankings, taus and every per-question score."""
    labels = _unique([r.label for r in runs])
    scores = {c: [_mean(list(pq[c].values())) for pq in per_question] for c in criteria}
    tau: dict[str, dict[str, float | None]] = {}
    p_value: dict[str, dict[str, float | None]] = {}
    for a in criteria:
        tau[a], p_value[a] = {}, {}
        for b in criteria:
            t, p = kendall(scores[a], scores[b])
            tau[a][b], p_value[a][b] = _none(t), _none(p)
    return {
        "format": FORMAT, "prompt_version": PROMPT_VERSION, "dataset": runs[0].dataset.name,
        "judge": judge_name, "criteria": {c: CRITERIA[c] for c in criteria}, "n_questions": len(ids),
        "n_shared": len(common_ids(runs)), "every": max(1, every), "scope": "headline",
        "methods": labels,
        "runs": [{"method": lab, "run": str(r.path), "answer_model": r.answer_model, "health": r.health,
                  "grounding_version": getattr(r.protocol, "grounding_version", None),
                  "scores": {c: _none(scores[c][i]) for c in criteria},
                  "n_scored": {c: sum(not math.isnan(v) for v in pq[c].values()) for c in criteria},
                  "judge_failed": {c: sum(math.isnan(v) for v in pq[c].values()) for c in criteria}}
                 for i, (lab, r, pq) in enumerate(zip(labels, runs, per_question, strict=True))],
        "ranking": {c: _ranking(scores[c], labels) for c in criteria},
        "kendall_tau": tau, "kendall_p": p_value, "calls": calls,
        "per_question": {lab: {c: {q: _none(v) for q, v in pq[c].items()} for c in criteria}
                         for lab, pq in zip(labels, per_question, strict=True)},
    }


def _ranking(scores: list[float], labels: list[str]) -> list[str]:
    """Methods best first (ties by name); a method with no score comes last."""
    return [lab for _, lab in sorted((math.inf if math.isnan(s) else -s, lab)
                                     for s, lab in zip(scores, labels, strict=True))]


def _none(x: float) -> float | None:
    return None if x is None or math.isnan(x) else x


def _unique(labels: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for lab in labels:
        seen[lab] = seen.get(lab, 0) + 1
        out.append(lab if labels.count(lab) == 1 else f"{lab}#{seen[lab]}")
    return out


def common_ids(runs: list[RunInput]) -> list[str]:
    """The questions every run answered and its protocol's headline counts, in the first run's
    order; one dataset only."""
    names = {r.dataset.name for r in runs}
    if len(names) > 1:
        raise ValueError(f"one matrix per dataset, not {sorted(names)}")
    shared = set.intersection(*(set(r.questions) & r.protocol.headline_questions(r.predictions) for r in runs))
    return [p["question_id"] for p in runs[0].predictions if p["question_id"] in shared]


async def build(runs: list[RunInput], judge: Any, concurrency: int = 4,
                criteria: tuple[str, ...] = tuple(CRITERIA),
                every: int = 1) -> tuple[list[str], list[dict[str, dict[str, float]]]]:
    """Every run re-judged on the questions all of them answered (every `every`-th of those, in
    question order: a slow local judge's sample, the same questions for every run)."""
    ids = common_ids(runs)[::max(1, every)]
    try:
        per_question = [await rejudge(r, ids, judge, concurrency, criteria) for r in runs]
    finally:
        if judge is not None:
            await judge.aclose()  # inside the loop that made its client (model_access.loop_clients)
    return ids, per_question
