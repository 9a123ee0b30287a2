"""The EpBench protocol the harness configures: the shared answer prompt, and the judging,
metrics and table parts put together (each part is its own class or function, so no class both
judges and renders tables: judging.py, metrics.py, table.py).
"""

from __future__ import annotations

from typing import Any

from memeval.datasets.types import Dataset, Question
from memeval.model_access.chat import ChatModel
from memeval.settings_history import Introduced

from ..presentation import Presentation
from ..protocol import Protocol
from .behaviour import EpBenchBehaviour
from .evidence import EPBENCH_GROUNDING_VERSIONS
from .judge import JUDGE_VERSIONS
from .judging import EpBenchJudging
from .metrics import CREDITS, EpBenchMetrics
from .order import ORDER_JUDGE_VERSIONS
from .scoring import POLICIES, PR_CONVENTIONS
from .table import PRESENTATION, render_table

_ANSWER_SYSTEM = (
    "You answer questions about a long narrative using only the material provided. When the "
    "question asks for a list, give every matching item and nothing else. If the material does "
    "not contain the answer, say that you cannot find it."
)
JUDGE_MODES = ("one_pass", "two_pass")


class EpBenchProtocol(Protocol):
    """Validates the configured settings and hands each step to the part that owns it."""
    former_paths = ("evaluation.epbench.EpBenchProtocol",)  # before evaluation/ had family subpackages

    name = "epbench"
    version = "2"
    gold_strings_in_text = True  # the gold items are the book's names, places, dates and events
    side_by_side_policies = POLICIES  # lenient (EpBench's own tables) and harsh (the GSW paper's Table 2)
    current_grounding = max(EPBENCH_GROUNDING_VERSIONS)  # 7: short forms of places, activity words of events (evidence.py)
    label_set = "memeval.evaluation.epbench.adapters:LABEL_SET"
    judge_matrix_family = "memeval.evaluation.epbench.adapters:JUDGE_MATRIX"
    # how shared display code words this benchmark (Protocol's phrase attributes, evaluation/phrases.py)
    title = "EpBench"
    agreement_check = "the deterministic matcher, gold item by gold item"
    matrix_score = "item F1"
    model_free_check = "EpBench's matcher"
    efficiency_title = "Efficiency and cost (GSW paper Table 3 shape)"
    pr_convention_notes = {
        "authors": "0-cue P = R = F1, nothing claimed R = 0: comparable with the GSW paper's Table 2",
        "defined_only": "averaged where defined: overall and 0-cue P / R not comparable with the GSW paper's Table 2"}
    # settings added after runs were saved without them: what their absence meant (upgrade layer).
    # Format 3: the order judge sees only the gold list and the judge's items; the P/R convention
    # (None: defined_only, unnamed in metrics.json). No entry for judge version 3 or the experiment's
    # policy: a saved config is resolved, so it holds the literal values it ran with.
    settings_history = (
        Introduced("judge_version", 1),
        Introduced("grounding_version", 1),
        Introduced("order_judge_version", 1, until_format=3),
        Introduced("pr_convention", None, until_format=3),
    )

    @classmethod
    def upgrade_description(cls, desc: dict[str, Any], run_format: int) -> dict[str, Any]:
        """Format 0 left out judge version 1 and the grounding version (1: format 0 predates 2
        and the key); formats 0-2 the order judge version (1)."""
        out = dict(desc)
        if run_format < 1:
            out.setdefault("judge_version", 1)
            out.setdefault("grounding_version", 1)
        if run_format < 3:  # after the keys describe() writes before it
            out.setdefault("order_judge_version", 1)
        return out

    def __init__(self, policy: str = "lenient", resamples: int = 1000, seed: int = 0,
                 credit: str = "raw", judge_mode: str = "one_pass", data_dir: str | None = None,
                 book: int | None = None, judge_version: int = 2, grounding_version: int = 7,
                 pr_convention: str | None = "defined_only", order_judge_version: int = 2):
        """`pr_convention` None: a run configured before the setting (defined_only, unnamed in its
        metrics); `order_judge_version` 1: the order judge that saw the answer (order.py)."""
        if policy not in POLICIES:
            raise ValueError(f"scoring.policy must be one of {POLICIES}, not {policy!r}")
        if credit not in CREDITS:
            raise ValueError(f"protocol.credit must be one of {CREDITS}, not {credit!r}")
        if judge_mode not in JUDGE_MODES:
            raise ValueError(f"protocol.judge_mode must be one of {JUDGE_MODES}, not {judge_mode!r}")
        if judge_version not in JUDGE_VERSIONS:
            raise ValueError(f"protocol.judge_version must be one of {JUDGE_VERSIONS}, not {judge_version!r} "
                             "(2 bounds the judge's reply; 1 is the first, unbounded judge)")
        if grounding_version not in EPBENCH_GROUNDING_VERSIONS:
            raise ValueError(f"protocol.grounding_version must be one of {EPBENCH_GROUNDING_VERSIONS}, not "
                             f"{grounding_version!r} (7: 6, and a place's short form is a name of its own, an event's activity word "
                             "not another event's; 6: 5, and any 0-cue answer with words beyond its declines, an echo "
                             "of the question's cue included, counts one claim; 5: 4, and naming a value of the book the question did not is asserting; "
                             "4: 3, and a 0-cue answer that asserts something counts one claim; "
                             "3: 2, and precision counts every claim the matcher finds; "
                             "2: no credit without evidence, event contents included; 1: runs before 2026-12-01)")
        if pr_convention is not None and pr_convention not in PR_CONVENTIONS:
            raise ValueError(f"protocol.pr_convention must be one of {PR_CONVENTIONS}, not {pr_convention!r} "
                             "(authors: the GSW authors' 0-cue and nothing-claimed scores; defined_only: "
                             "P/R averaged over the questions where they are defined)")
        if order_judge_version not in ORDER_JUDGE_VERSIONS:
            raise ValueError(f"protocol.order_judge_version must be one of {ORDER_JUDGE_VERSIONS}, not "
                             f"{order_judge_version!r} (2: the order judge sees only the gold list and the "
                             "judge's items, as the official one; 1: runs configured before it)")
        self.judge_version = judge_version
        self.grounding_version = grounding_version
        self.pr_convention = pr_convention
        self.order_judge_version = order_judge_version
        self.policy = policy
        self.credit = credit
        self.judge_mode = judge_mode
        # the configured versions as named behaviours, read by judging and metrics (behaviour.py)
        self.behaviour = EpBenchBehaviour.from_versions(judge=judge_version, grounding=grounding_version,
                                                        order_judge=order_judge_version)
        self.judging = EpBenchJudging(policy, judge_mode, data_dir, book, self.behaviour,
                                      pr_convention or "defined_only")
        self.scoring = EpBenchMetrics(policy, resamples, seed, credit, data_dir, book, self.behaviour.grounding,
                                      pr_convention)

    def describe(self) -> dict[str, Any]:
        return {"protocol": self.name, "version": self.version, "credit": self.credit,
                "judge_mode": self.judge_mode, "matcher_universe": self.judging.universe.source,
                "judge_version": self.judge_version, "grounding_version": self.grounding_version,
                "order_judge_version": self.order_judge_version,
                **({"pr_convention": self.pr_convention} if self.pr_convention else {})}

    def answer_messages(self, question: Question, context_text: str) -> list[dict[str, str]]:
        user = f"Material:\n{context_text}\n\nQuestion: {question.text}"
        return [{"role": "system", "content": _ANSWER_SYSTEM}, {"role": "user", "content": user}]

    async def judge(self, question: Question, prediction: dict[str, Any], dataset: Dataset,
                    judge: ChatModel) -> dict[str, Any]:
        return await self.judging.judge(question, prediction, dataset, judge)

    def metrics(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]],
                policy: str | None = None) -> dict[str, Any]:
        return self.scoring.metrics(judgments, predictions, policy)

    def question_scores(self, judgments: list[dict[str, Any]],
                        predictions: list[dict[str, Any]]) -> dict[str, float]:
        return self.scoring.question_scores(judgments, predictions)

    def shown_metrics(self, metrics: dict[str, Any], judgments: list[dict[str, Any]],
                      predictions: list[dict[str, Any]]) -> dict[str, Any]:
        """Chronological Awareness with Order counting credited items only (an answer naming
        the gold items without credit, in the gold order, is not in order); metrics.json's own
        value stays under `order_uncredited`, since changing it would change saved runs."""
        ca = metrics.get("chronological_awareness")
        if not isinstance(ca, dict) or not any("order_mapping" in j for j in judgments):
            return metrics
        fixed = self.scoring.chronological_credited(judgments, predictions, str(metrics.get("credit", self.credit)))
        fixed["order_uncredited"] = ca.get("order")
        return {**metrics, "chronological_awareness": fixed}

    def policy_overalls(self, judgments: list[dict[str, Any]],
                        predictions: list[dict[str, Any]]) -> dict[str, Any] | None:
        return self.scoring.by_policy(judgments, predictions)

    def headline_scores(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]],
                        policy: str | None = None) -> dict[str, float]:
        """Per-question F1 under `policy` (the overall is their mean over the judged questions)."""
        return self.scoring.question_scores(judgments, predictions, policy)

    def table(self, metrics: dict[str, Any], meta: dict[str, Any]) -> str:
        return render_table(metrics, meta)

    def presentation(self) -> Presentation:
        """F1 by cue bucket (GSW Table 2 shape) and P / R; per question, F1 under the credit."""
        return PRESENTATION
