"""The judge check's label sets, one entry per benchmark: which conf/dataset config the check
composes, and the adapter to that family's label-set code (evaluation/epbench/judge_check.py,
evaluation/conversations/judge_check.py), which loads, judges and reports the cases. A new
benchmark's label set is one more entry in LABEL_SETS.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memeval.datasets.types import Dataset
from memeval.evaluation.conversations import judge_check as conversations
from memeval.evaluation.epbench import judge_check as epbench
from memeval.evaluation.protocol import Protocol


class LabelSet:
    """One benchmark's hand-labelled answers; subclasses call their family's label-set code."""

    configs: tuple[str, ...] = ()  # every configuration scored when a judge runs
    deterministic_configs: tuple[str, ...] = ()  # those scored without a model
    no_judge = "none"  # the judge's name in the header when none runs
    last_label = ""  # the last printed line is f"{last_label}: accuracy" of last_config
    last_config = ""

    def __init__(self, name: str, config: str):
        self.name = name  # the --dataset choice
        self.config = config  # the conf/dataset/*.yaml a run on these questions composes

    def load(self, labels: Path | None, dataset: Dataset) -> list[Any]:
        raise NotImplementedError

    def deterministic(self, cases: list[Any], protocol: Protocol) -> None:
        raise NotImplementedError

    async def judge(self, cases: list[Any], protocol: Protocol, dataset: Dataset, judge: Any,
                    concurrency: int) -> None:
        raise NotImplementedError

    def report(self, cases: list[Any], configs: list[str], judge_name: str) -> tuple[str, dict[str, Any]]:
        raise NotImplementedError

    def judge_version(self, protocol: Protocol) -> int:
        """The judge version the protocol judges with: the one the check measures."""
        return int(getattr(protocol, "judge_version", 1))

    @staticmethod
    def prompt_note(protocol: Protocol) -> str:
        described = protocol.describe()
        prompt = described.get("judge_prompt") or described.get("judge_prompts")
        return f", judge prompt {prompt}" if prompt else ""

    def last_line(self, numbers: dict[str, Any]) -> str:
        return f"{self.last_label}: {numbers['overall'][self.last_config]['accuracy']:.3f}"


class EpBenchLabels(LabelSet):
    """Gold-item credits (0 / 0.5 / 1) under raw, grounded, two-pass and the matcher."""

    configs = epbench.CONFIGS
    deterministic_configs = epbench.DETERMINISTIC
    no_judge = "none (judge-free configurations only)"
    last_label, last_config = "deterministic matcher accuracy", "deterministic"

    def load(self, labels: Path | None, dataset: Dataset) -> list[Any]:
        return epbench.load_cases(labels or epbench.LABELS, dataset)

    def deterministic(self, cases: list[Any], protocol: Protocol) -> None:
        epbench.run_matcher(cases, protocol.judging.universe,  # type: ignore[attr-defined]
                            protocol.grounding_version)  # type: ignore[attr-defined]

    async def judge(self, cases: list[Any], protocol: Protocol, dataset: Dataset, judge: Any,
                    concurrency: int) -> None:
        await epbench.run_judge(cases, judge, protocol.judging.universe,  # type: ignore[attr-defined]
                                concurrency, self.judge_version(protocol),
                                protocol.grounding_version)  # type: ignore[attr-defined]

    def report(self, cases: list[Any], configs: list[str], judge_name: str) -> tuple[str, dict[str, Any]]:
        return epbench.report(cases, configs, judge_name)


class ConversationLabels(LabelSet):
    """CORRECT / WRONG labels under raw, grounded, grounding only and token F1 (LoCoMo, LongMemEval)."""

    configs = conversations.CONFIGS
    deterministic_configs = conversations.DETERMINISTIC
    no_judge = "none (judge-free configurations only)"
    last_label, last_config = "deterministic (grounding only) accuracy", "grounding_only"

    def load(self, labels: Path | None, dataset: Dataset) -> list[Any]:
        return conversations.load_cases(labels or conversations.LABELS[self.name], dataset)

    def deterministic(self, cases: list[Any], protocol: Protocol) -> None:
        conversations.run_deterministic(cases, self.name, int(getattr(protocol, "grounding_version", 1)))

    async def judge(self, cases: list[Any], protocol: Protocol, dataset: Dataset, judge: Any,
                    concurrency: int) -> None:
        await conversations.run_judge(cases, protocol, dataset, judge, concurrency)

    def report(self, cases: list[Any], configs: list[str], judge_name: str) -> tuple[str, dict[str, Any]]:
        return conversations.report(cases, configs, judge_name, self.name)


LABEL_SETS: dict[str, LabelSet] = {s.name: s for s in (
    EpBenchLabels("epbench", "epbench20"),
    ConversationLabels("locomo", "locomo"),
    ConversationLabels("longmemeval", "longmemeval_oracle"),
)}
