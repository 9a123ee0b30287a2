"""EpBench judge version 2: a bounded reply, so a small judge that loops still returns JSON.

Version 1 (the first judge; runs judged with it keep replaying through the upgrade module) let a 0.5B judge repeat
one item until max_tokens cut the list: no JSON, the question unjudged. Version 2 bounds every
list and string so the grammar closes the reply within max_tokens, and drops repeated items.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from memeval.evaluation.epbench.judge import (
    BOUNDED_ITEMS,
    EXPLANATION_CHARS,
    ITEM_CHARS,
    bounded_max_tokens,
    judge_one,
    judge_two_pass,
    judgment_model,
)
from memeval.evaluation.epbench.protocol import EpBenchProtocol
from memeval.model_access.chat import ChatResult
from memeval.model_access.tokenizer import get_encoding


class LoopingJudge:
    """Answers like the 0.5B judge that looped: one claimed item over and over (as many as the
    schema allows), and records what each request asked for."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []

    async def complete_json(self, messages, output_model, *, max_tokens=None):
        schema = output_model.model_json_schema()
        self.asked.append({"schema": schema, "max_tokens": max_tokens})
        data: dict[str, Any] = {}
        for field in ("identified_items", "asserted_items"):
            if field in schema["properties"]:
                n_items = schema["properties"][field].get("maxItems", 40)
                data[field] = (["Post-processing techniques"] * (n_items - 1) + ["post-processing TECHNIQUES "])
        if "matching_score" in schema["properties"]:
            data["matching_score"] = [0] * schema["properties"]["matching_score"]["minItems"]
            data["explanation"] = "looped"
        return output_model.model_validate(data), ChatResult(json.dumps(data), 10, 10, False, "looping")


def test_version_2_drops_repeated_items_and_asks_for_a_bounded_reply() -> None:
    judge = LoopingJudge()
    out = asyncio.run(judge_one(judge, "Where?", ["Snug Harbor", "Pier 17"], "Post-processing techniques.",
                                rules=2))
    assert out["identified_items"] == ["Post-processing techniques"]  # one claim, not 24
    asked = judge.asked[-1]
    assert asked["schema"]["properties"]["identified_items"]["maxItems"] == BOUNDED_ITEMS
    assert asked["max_tokens"] == bounded_max_tokens(2) > 600

    two = asyncio.run(judge_two_pass(judge, "Where?", ["Snug Harbor"], "Post-processing techniques.", rules=2))
    assert two["identified_items"] == ["Post-processing techniques"]


def test_version_1_is_unchanged_for_saved_runs() -> None:
    judge = LoopingJudge()
    out = asyncio.run(judge_one(judge, "Where?", ["Snug Harbor"], "x", rules=1))
    assert len(out["identified_items"]) == 40 and judge.asked[-1]["max_tokens"] == 600
    assert "maxLength" not in json.dumps(judge.asked[-1]["schema"]["properties"]["identified_items"])
    assert judgment_model(3).__name__ == "EpBenchJudgment3"  # the name in saved cache keys


@pytest.mark.parametrize("n_gold", [1, 6, 30])
def test_the_largest_bounded_reply_fits_its_token_budget(n_gold: int) -> None:
    """The grammar, not max_tokens, must end a looping reply: the longest reply the schema allows
    (every list full, every string at its length limit, in ordinary prose) fits the budget."""
    enc = get_encoding()
    prose = "the retired detective explained post-processing techniques at the harbour exhibition on 12 March "
    item = (prose * 3)[:ITEM_CHARS]
    reply = {"identified_items": [item] * BOUNDED_ITEMS, "explanation": (prose * 10)[:EXPLANATION_CHARS],
             "matching_score": [0.5] * n_gold}
    judgment_model(n_gold, bounded=True).model_validate(reply)  # the reply is schema-valid
    assert len(enc.encode(json.dumps(reply, indent=2))) < bounded_max_tokens(n_gold)


def test_protocol_rejects_an_unknown_judge_version_and_records_version_2() -> None:
    with pytest.raises(ValueError, match="judge_version"):
        EpBenchProtocol(judge_version=4)  # 3: the typed judge of +experiment=paper (test_experiment_reference.py)
    assert EpBenchProtocol().describe()["judge_version"] == 2  # the shipped default
    assert EpBenchProtocol(judge_version=1).describe()["judge_version"] == 1
