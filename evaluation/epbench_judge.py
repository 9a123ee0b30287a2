"""The EpBench one-call LLM judge: extract claimed items, score each gold item 1 / 0.5 / 0."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from model_access.chat import ChatModel
from model_access.errors import JsonOutputError

PROMPT_VERSION = "epbench-judge-v1"
MAX_ITEMS = 40

_SYSTEM = (
    "You grade answers to questions about a long story. You are given the question, the list of "
    "ground-truth items, and the answer to grade. Return JSON with three fields.\n"
    "identified_items: every distinct item (date, place, person, event, detail) that the answer "
    "actually asserts as part of its reply, written as it appears in the answer. Use an empty list "
    "if the answer declines, says it does not know, or says the information is absent. Never copy "
    "an item from the ground truth unless the answer itself states it.\n"
    "matching_score: one number per ground-truth item, in the given order: 1 if the answer states "
    "it (synonyms and other date formats count), 0.5 if the answer states something related but "
    "not exact, 0 if it is missing.\n"
    "explanation: one or two sentences."
)


class _Base(BaseModel):
    identified_items: list[str] = Field(max_length=MAX_ITEMS)
    explanation: str = Field(max_length=600)


def judgment_model(n_gold: int) -> type[BaseModel]:
    """A schema whose matching_score has exactly n_gold entries, each 0, 0.5 or 1."""
    score = Literal[0, 0.5, 1]
    return create_model(
        f"EpBenchJudgment{n_gold}", __base__=_Base,
        matching_score=(list[score], Field(min_length=n_gold, max_length=n_gold)),
    )


def judge_messages(question: str, gold: list[str], answer: str, chapter_text: str | None) -> list[dict[str, str]]:
    if chapter_text is not None:
        truth = ("The ground truth is one item: the full chapter below. Score it 1 if the answer "
                 "recounts this chapter's event accurately and in substance, 0.5 if partly, 0 if "
                 f"not.\n\nChapter:\n{chapter_text}")
        gold_list = json.dumps(gold, ensure_ascii=False)
    else:
        truth = "Ground-truth items (may be empty: then nothing should have been found):"
        gold_list = json.dumps(gold, ensure_ascii=False)
    user = (f"Question:\n{question}\n\n{truth}\n{gold_list}\n\nAnswer to grade:\n{answer}\n\n"
            f"Return the JSON object; matching_score must have exactly {len(gold)} entries.")
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


async def judge_one(judge: ChatModel, question: str, gold: list[str], answer: str,
                    chapter_text: str | None = None) -> dict[str, Any]:
    """Raw judge output for the raw gold list, or a recorded failure (never a silent 0)."""
    model = judgment_model(len(gold))
    messages = judge_messages(question, gold, answer, chapter_text)
    try:
        parsed, result = await judge.complete_json(messages, model, max_tokens=600)
    except JsonOutputError as exc:
        return {"judge_error": str(exc), "judge_raw": exc.raw_outputs}
    data = parsed.model_dump()
    return {
        "identified_items": [str(x) for x in data["identified_items"]],
        "matching_score_raw": [float(x) for x in data["matching_score"]],
        "explanation": data["explanation"],
        "judge_cached": result.cached,
    }
