"""LoCoMo's and LongMemEval's adapters for the dataset-wide commands (evaluation/adapters.py):
their judge-check label sets (CORRECT / WRONG labels, judge_check.py; LoCoMo's with the
known-wrong answers of known_wrong.py) and their judge-matrix adapters. Each protocol class names
its own (`label_set`, `judge_matrix_family`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memeval.datasets.types import Dataset, Question

from ..adapters import NOTHING, JudgeMatrixFamily, LabelSet
from ..protocol import Protocol
from . import judge_check, known_wrong
from .locomo import grounding as locomo_grounding
from .longmemeval import grounding as lme_grounding
from .longmemeval import judge_kind

_LME_TYPES = {"temporal-reasoning": "temporal", "knowledge-update": "update",
              "single-session-preference": "preference", "abstention": "abstention"}


class ConversationLabels(LabelSet):
    """CORRECT / WRONG labels under raw, grounded, grounding only and token F1."""

    configs = judge_check.CONFIGS
    deterministic_configs = judge_check.DETERMINISTIC
    no_judge = "none (judge-free configurations only)"
    last_label, last_config = "deterministic (grounding only) accuracy", "grounding_only"

    def load(self, labels: Path | None, dataset: Dataset) -> list[Any]:
        return judge_check.load_cases(labels or judge_check.LABELS[self.name], dataset)

    def deterministic(self, cases: list[Any], protocol: Protocol) -> None:
        judge_check.run_deterministic(cases, self.name, protocol.behaviour.grounding)  # type: ignore[attr-defined]

    async def judge(self, cases: list[Any], protocol: Protocol, dataset: Dataset, judge: Any,
                    concurrency: int) -> None:
        await judge_check.run_judge(cases, protocol, dataset, judge, concurrency)

    def report(self, cases: list[Any], configs: list[str], judge_name: str) -> tuple[str, dict[str, Any]]:
        return judge_check.report(cases, configs, judge_name, self.name)


class LoCoMoLabels(ConversationLabels):
    """LoCoMo's labels, and its answers written to be wrong (false-accept rates)."""

    known_wrong_file = known_wrong.KNOWN_WRONG

    def load_known_wrong(self, path: Path, audit: Path, dataset: Dataset, n: int | None,
                         seed: int) -> tuple[Any, list[Any]]:
        known = known_wrong.load_known_wrong(path, dataset, known_wrong.flagged_questions(audit))
        return known, known_wrong.subset(known.cases, n, seed)

    def known_wrong_report(self, known: Any, cases: list[Any], configs: list[str], accuracy: dict[str, Any],
                           source: str, seed: int) -> tuple[str, dict[str, Any]]:
        return known_wrong.report(known, cases, configs, accuracy, source, seed)

    def calibration_entries(self, false_accept: Any, base: dict[str, Any]) -> list[dict[str, Any]]:
        return known_wrong.calibration_entries(false_accept, base)


class LoCoMoMatrix(JudgeMatrixFamily):
    def question_type(self, q: Question, dataset: Dataset) -> str:
        cat = int(q.attrs["category"])
        return "abstention" if cat == 5 else "temporal" if cat == 2 else "default"

    def reference(self, q: Question, dataset: Dataset) -> str:
        return NOTHING if int(q.attrs["category"]) == 5 else str(q.gold[0])

    def model_free(self, q: Question, answer: str, dataset: Dataset, protocol: Protocol) -> float:
        speakers = protocol.speakers(q, dataset)  # type: ignore[attr-defined]
        g = locomo_grounding(q.text, q.gold[0], int(q.attrs["category"]), answer, speakers,
                             protocol.behaviour.grounding)  # type: ignore[attr-defined]
        return float(g["grounded"])


class LongMemEvalMatrix(JudgeMatrixFamily):
    @staticmethod
    def kind(q: Question) -> str:
        return judge_kind(q.attrs["question_type"], bool(q.attrs.get("is_abstention")))

    def question_type(self, q: Question, dataset: Dataset) -> str:
        return _LME_TYPES.get(self.kind(q), "default")

    def model_free(self, q: Question, answer: str, dataset: Dataset, protocol: Protocol) -> float:
        return float(lme_grounding(self.kind(q), q.text, q.gold[0], answer)["grounded"])


LOCOMO_LABELS = LoCoMoLabels("locomo", "locomo")
LONGMEMEVAL_LABELS = ConversationLabels("longmemeval", "longmemeval_oracle")
LOCOMO_MATRIX = LoCoMoMatrix()
LONGMEMEVAL_MATRIX = LongMemEvalMatrix()
