"""EpBench's adapters for the dataset-wide commands (evaluation/adapters.py): its judge-check
label set (gold-item credits, judge_check.py) and its judge-matrix adapter. EpBenchProtocol names
them (`label_set`, `judge_matrix_family`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from memeval.datasets.types import Dataset, Question

from ..adapters import NOTHING, JudgeMatrixFamily, LabelSet
from ..protocol import Protocol
from . import judge_check
from .matcher import match_answer

ACCOUNT_CHARS = 2500  # the passage shown for an account question (a small judge's context)


class EpBenchLabels(LabelSet):
    """Gold-item credits (0 / 0.5 / 1) under raw, grounded, two-pass and the matcher."""

    configs = judge_check.CONFIGS
    deterministic_configs = judge_check.DETERMINISTIC
    no_judge = "none (judge-free configurations only)"
    last_label, last_config = "deterministic matcher accuracy", "deterministic"

    def load(self, labels: Path | None, dataset: Dataset) -> list[Any]:
        return judge_check.load_cases(labels or judge_check.LABELS, dataset)

    def deterministic(self, cases: list[Any], protocol: Protocol) -> None:
        judge_check.run_matcher(cases, protocol.judging.universe,  # type: ignore[attr-defined]
                                protocol.behaviour.grounding)  # type: ignore[attr-defined]

    async def judge(self, cases: list[Any], protocol: Protocol, dataset: Dataset, judge: Any,
                    concurrency: int) -> None:
        await judge_check.run_judge(cases, judge, protocol.judging.universe,  # type: ignore[attr-defined]
                                    concurrency, self.judge_version(protocol),
                                    protocol.behaviour.grounding)  # type: ignore[attr-defined]

    def report(self, cases: list[Any], configs: list[str], judge_name: str) -> tuple[str, dict[str, Any]]:
        return judge_check.report(cases, configs, judge_name)


class EpBenchMatrix(JudgeMatrixFamily):
    def question_type(self, q: Question, dataset: Dataset) -> str:
        gold = list(dict.fromkeys(q.gold))
        rt = q.attrs.get("retrieval_type")
        if not gold:
            return "abstention"
        if rt == "Full event details":
            return "account"
        return "list" if len(gold) > 1 else "temporal" if rt == "Times" else "default"

    def reference(self, q: Question, dataset: Dataset) -> str:
        gold = list(dict.fromkeys(q.gold))
        if q.attrs.get("retrieval_type") == "Full event details" and q.gold_units:
            return dataset.corpus_for(q).unit(q.gold_units[0]).text[:ACCOUNT_CHARS]
        return "; ".join(gold) if gold else NOTHING

    def model_free(self, q: Question, answer: str, dataset: Dataset, protocol: Protocol) -> float:
        gold = list(dict.fromkeys(q.gold))  # the protocol's de-duplication (scoring.dedupe_gold)
        universe = protocol.judging.universe  # type: ignore[attr-defined]
        r = match_answer(q.text, q.attrs.get("retrieval_type") or "", gold, answer, universe)
        return math.nan if r is None else r.f1(protocol.policy)  # type: ignore[attr-defined]


LABEL_SET = EpBenchLabels("epbench", "epbench20")
JUDGE_MATRIX = EpBenchMatrix()
