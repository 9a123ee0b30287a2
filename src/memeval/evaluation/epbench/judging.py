"""EpBench judging: one prediction -> one judgments.jsonl line (LLM judge, grounding, matcher).

Every line keeps the judge's raw credit (the official protocol) and adds the grounded credit
(only what the answer text supports) and the deterministic matcher's result, so metrics can
report all three and their agreement from judgments.jsonl alone. Only this class calls a model
at judge time; metrics and tables live in metrics.py and table.py.
"""

from __future__ import annotations

from typing import Any

from memeval.datasets.types import Dataset, Question
from memeval.model_access.chat import ChatModel

from .behaviour import EpBenchBehaviour
from .judge import (
    BOUNDED_PROMPT_VERSION,
    JUDGE_INPUTS,
    PROMPT_VERSION,
    TWO_PASS_VERSION,
    TYPED_PROMPT_VERSION,
    judge_one,
    judge_two_pass,
)
from .matcher import checks
from .order import judge_order, needs_order_call
from .scoring import dedupe_gold, score_question
from .universe import Universe, load_universe

_PROMPTS = {1: PROMPT_VERSION, 2: BOUNDED_PROMPT_VERSION, 3: TYPED_PROMPT_VERSION}


class EpBenchJudging:
    """Judges one answer under a policy and judge mode; the matcher universe comes from the data."""

    gold_duplicates = "removed"  # dedupe_gold: a repeated gold item is scored once (the authors keep it)

    def __init__(self, policy: str, judge_mode: str, data_dir: str | None, book: int | None,
                 behaviour: EpBenchBehaviour, pr_convention: str = "defined_only"):
        """`behaviour`: the protocol's configured judge, grounding and order judge versions as
        named behaviours (behaviour.py), built once by the protocol."""
        if behaviour.judge.reads_question_type and judge_mode == "two_pass":
            raise ValueError("EpBench judge_version 3 (the question's type, as the authors' one-call judge) "
                             "is a one_pass protocol: set judge_mode=one_pass or judge_version=2")
        self.policy = policy
        self.pr_convention = pr_convention
        self.behaviour = behaviour
        self.judge_mode = judge_mode
        self.data_dir = data_dir
        self.book = book

    def judge_facts(self) -> dict[str, str]:
        """What this judging reads and does, in an experiment reference's terms (harness/reference.py)."""
        judge_input, empties = JUDGE_INPUTS[self.behaviour.judge.version]
        return {"judge_input": judge_input, "judge_empties_items": empties,
                "gold_duplicates": self.gold_duplicates}

    @property
    def universe(self) -> Universe:
        return load_universe(self.data_dir, self.book)

    async def judge(self, question: Question, prediction: dict[str, Any], dataset: Dataset,
                    judge: ChatModel) -> dict[str, Any]:
        rt = question.attrs.get("retrieval_type")
        chapter_text = None
        if rt == "Full event details" and question.gold_units:
            chapter_text = dataset.corpus_for(question).unit(question.gold_units[0]).text
        two_pass = self.judge_mode == "two_pass" and chapter_text is None
        if two_pass:
            raw = await judge_two_pass(judge, question.text, list(question.gold), prediction["answer"],
                                       self.behaviour.judge)
        else:
            raw = await judge_one(judge, question.text, list(question.gold), prediction["answer"], chapter_text,
                                  self.behaviour.judge, question_type=rt)
        line: dict[str, Any] = {
            "question_id": question.id, "bucket": question.attrs["bucket"],
            "get": question.attrs["get"], "retrieval_type": rt,
            "judge_prompt": TWO_PASS_VERSION if two_pass else _PROMPTS[self.behaviour.judge.version],
            "judge_mode": "two_pass" if two_pass else "one_pass", **raw,
        }
        if "judge_error" in line:
            line["gold"] = list(dict.fromkeys(question.gold))
            return line
        gold, scores = dedupe_gold(list(question.gold), raw["matching_score_raw"])
        line["gold"], line["matching_score"] = gold, scores
        s = score_question(len(gold), scores, len(raw["identified_items"]), self.policy, self.pr_convention)
        line.update(precision=s.precision, recall=s.recall, f1=s.f1)
        line.update(checks(question.text, rt or "", gold, scores, line["identified_items"],
                           prediction["answer"], self.universe, self.behaviour.grounding))
        if needs_order_call(line["get"], len(gold)):  # Chronological Awareness: the second call
            line.update(await judge_order(judge, question.text, gold, prediction["answer"],
                                          line["identified_items"], self.behaviour.order))
        return line
