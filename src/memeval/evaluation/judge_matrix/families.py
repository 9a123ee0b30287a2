"""What the matrix needs from each benchmark family: a question's type (which per-type rule
judges it), the reference the LLM criteria are shown, and the model-free score.

One adapter per protocol name, as cli/label_sets.py adapts the label sets; a new family is one
more entry in FAMILIES.
"""

from __future__ import annotations

import math

from memeval.datasets.types import Dataset, Question

from ..conversations.grounding import ground_verdict
from ..conversations.locomo import grounding as locomo_grounding
from ..conversations.longmemeval import grounding as lme_grounding
from ..conversations.longmemeval import judge_kind
from ..epbench.matcher import match_answer, match_list
from ..epbench.scoring import score_question
from ..protocol import Protocol

NOTHING = "nothing: the material holds no such thing, so a correct reply says it cannot be found"
ACCOUNT_CHARS = 2500  # the passage shown for an account question (a small judge's context)
_LME_TYPES = {"temporal-reasoning": "temporal", "knowledge-update": "update",
              "single-session-preference": "preference", "abstention": "abstention"}


class Family:
    def question_type(self, q: Question, dataset: Dataset) -> str:
        raise NotImplementedError

    def reference(self, q: Question, dataset: Dataset) -> str:
        return str(q.gold[0]) if q.gold else NOTHING

    def model_free(self, q: Question, answer: str, dataset: Dataset, protocol: Protocol) -> float:
        raise NotImplementedError


class EpBench(Family):
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


class LoCoMo(Family):
    def question_type(self, q: Question, dataset: Dataset) -> str:
        cat = int(q.attrs["category"])
        return "abstention" if cat == 5 else "temporal" if cat == 2 else "default"

    def reference(self, q: Question, dataset: Dataset) -> str:
        return NOTHING if int(q.attrs["category"]) == 5 else str(q.gold[0])

    def model_free(self, q: Question, answer: str, dataset: Dataset, protocol: Protocol) -> float:
        speakers = protocol.speakers(q, dataset)  # type: ignore[attr-defined]
        g = locomo_grounding(q.text, q.gold[0], int(q.attrs["category"]), answer, speakers,
                             protocol.grounding_version)  # type: ignore[attr-defined]
        return float(g["grounded"])


class LongMemEval(Family):
    @staticmethod
    def kind(q: Question) -> str:
        return judge_kind(q.attrs["question_type"], bool(q.attrs.get("is_abstention")))

    def question_type(self, q: Question, dataset: Dataset) -> str:
        return _LME_TYPES.get(self.kind(q), "default")

    def model_free(self, q: Question, answer: str, dataset: Dataset, protocol: Protocol) -> float:
        return float(lme_grounding(self.kind(q), q.text, q.gold[0], answer)["grounded"])


class Custom(Family):
    def question_type(self, q: Question, dataset: Dataset) -> str:
        return "list" if q.attrs.get("answer_kind") == "items" and len(set(q.gold)) > 1 else "default"

    def reference(self, q: Question, dataset: Dataset) -> str:
        return "; ".join(dict.fromkeys(q.gold)) if q.attrs.get("answer_kind") == "items" else str(q.gold[0])

    def model_free(self, q: Question, answer: str, dataset: Dataset, protocol: Protocol) -> float:
        if q.attrs.get("answer_kind") == "items":
            gold = list(dict.fromkeys(q.gold))
            r = match_list(q.text, gold, answer)
            return score_question(len(gold), r.matching_score, len(r.identified_items),
                                  protocol.policy).f1  # type: ignore[attr-defined]
        return float(ground_verdict(answer, str(q.gold[0]), q.text, version=2).supported)


FAMILIES: dict[str, Family] = {"epbench": EpBench(), "locomo": LoCoMo(), "longmemeval": LongMemEval(),
                               "custom": Custom()}


def family_of(protocol: Protocol) -> Family:
    if protocol.name not in FAMILIES:
        raise ValueError(f"judge-matrix knows no family {protocol.name!r} (known: {sorted(FAMILIES)})")
    return FAMILIES[protocol.name]
