"""What the dataset-wide commands need from a benchmark family, declared by its protocol class.

`memeval judge-check` scores a judge against a family's hand-labelled answers (`LabelSet`) and
`memeval judge-matrix` re-judges its runs under several criteria (`JudgeMatrixFamily`). The
family's own package defines its adapters; its protocol class names them as `module:attr`
strings (`Protocol.label_set`, `Protocol.judge_matrix_family`), so the commands find every
family through the plugin registry and the core names none. Strings, not objects: an adapter's
module imports the family's scoring code, which may import the protocol's module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memeval.datasets.types import Dataset, Question
from memeval.plugins import load_object, registered

from .protocol import Protocol

NOTHING = "nothing: the material holds no such thing, so a correct reply says it cannot be found"


class LabelSet:
    """One benchmark's hand-labelled answers; subclasses call their family's label-set code."""

    configs: tuple[str, ...] = ()  # every configuration scored when a judge runs
    deterministic_configs: tuple[str, ...] = ()  # those scored without a model
    no_judge = "none"  # the judge's name in the header when none runs
    last_label = ""  # the last printed line is f"{last_label}: accuracy" of last_config
    last_config = ""
    # answers written to be wrong (`--known-wrong`): their file under the data folder, or None
    known_wrong_file: Path | None = None

    def __init__(self, name: str, config: str):
        self.name = name  # the --dataset choice: the protocol's registered name
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

    # The known-wrong check, for a label set with `known_wrong_file`: (kept answers, the subset
    # judged), its report (text, numbers) and the calibration entries its rates record.
    def load_known_wrong(self, path: Path, audit: Path, dataset: Dataset, n: int | None,
                         seed: int) -> tuple[Any, list[Any]]:
        raise NotImplementedError(f"the {self.name} label set has no known-wrong answers")

    def known_wrong_report(self, known: Any, cases: list[Any], configs: list[str], accuracy: dict[str, Any],
                           source: str, seed: int) -> tuple[str, dict[str, Any]]:
        raise NotImplementedError(f"the {self.name} label set has no known-wrong answers")

    def calibration_entries(self, false_accept: Any, base: dict[str, Any]) -> list[dict[str, Any]]:
        raise NotImplementedError(f"the {self.name} label set has no known-wrong answers")


class JudgeMatrixFamily:
    """What the judge matrix needs from a family: a question's type (which per-type rule judges
    it), the reference the LLM criteria are shown, and the model-free score."""

    def question_type(self, q: Question, dataset: Dataset) -> str:
        raise NotImplementedError

    def reference(self, q: Question, dataset: Dataset) -> str:
        return str(q.gold[0]) if q.gold else NOTHING

    def model_free(self, q: Question, answer: str, dataset: Dataset, protocol: Protocol) -> float:
        raise NotImplementedError


def label_sets() -> dict[str, LabelSet]:
    """Registered protocol name -> its label set, for every protocol that declares one."""
    found: dict[str, LabelSet] = {}
    for name, plugin in registered("protocol").items():
        ref = getattr(plugin.load(), "label_set", None)
        if ref:
            found[name] = _typed(load_object(ref), LabelSet, ref)
    return found


def judge_matrix_family(protocol: Protocol) -> JudgeMatrixFamily:
    """The judge-matrix adapter the protocol's class declares; a ValueError naming it if none."""
    ref = getattr(type(protocol), "judge_matrix_family", None)
    if not ref:
        raise ValueError(f"judge-matrix: the {protocol.name!r} protocol ({type(protocol).__name__}) declares no "
                         "judge_matrix_family adapter")
    return _typed(load_object(ref), JudgeMatrixFamily, ref)


def _typed(obj: Any, kind: type, ref: str) -> Any:
    if not isinstance(obj, kind):
        raise TypeError(f"{ref} is not a {kind.__name__}")
    return obj
