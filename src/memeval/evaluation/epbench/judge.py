"""The EpBench LLM judge: the official one-call judge, and a two-pass variant.

One pass (the official protocol, the default): the judge sees the gold list and the answer and
returns the claimed items and a score per gold item. A judge that sees the gold list can copy
it into the claimed items; the two-pass variant cannot: pass 1 lists what the answer asserts
without seeing the gold items, pass 2 matches those claims (not the answer) to the gold items.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints, create_model

from memeval.model_access.chat import ChatModel
from memeval.model_access.errors import JsonOutputError

from .behaviour import EpBenchJudge

PROMPT_VERSION = "epbench-judge-v1"
MAX_ITEMS = 40
# Judge version 2 (protocol.judge_version: 2): the same prompt, with every list and string bounded
# so that the largest schema-valid reply fits in max_tokens. A small greedy judge that loops
# ("item A", "item A", ...) is then closed by the grammar and still returns JSON (duplicates are
# dropped), where version 1 ran out of tokens mid-list and failed the question. Version 1 stays
# the default in code so that runs saved before it replay with unchanged cache keys.
# Judge version 3 (chosen by an experiment whose reference judged so: +experiment=paper): version 2's
# bounds, with the judge's input as the GSW and EpBench authors' judges had it: the question's type
# (retrieval_type: Times, Spaces, ...) instead of its text, and no identified item at all when the
# answer makes any negative statement (versions 1 and 2 empty the list only on a decline). Our own
# wording; the fair experiment keeps version 2.
JUDGE_VERSIONS = (1, 2, 3)
BOUNDED_PROMPT_VERSION = "epbench-judge-v2"
TYPED_PROMPT_VERSION = "epbench-judge-v3"
# what each version's judge reads and when it lists nothing (harness/reference.py compares these
# with an experiment's reference)
JUDGE_INPUTS = {1: ("question_text", "on_decline"), 2: ("question_text", "on_decline"),
                3: ("question_type", "on_any_negative_statement")}
BOUNDED_ITEMS = 24
ITEM_CHARS = 120
EXPLANATION_CHARS = 600

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


_TYPED_SYSTEM = (
    "You check an answer against a list of correct items. You are told what kind of item the "
    "question asked for (not the question itself), the correct items, and the answer. Return JSON "
    "with three fields.\n"
    "identified_items: the distinct items (a date, a place, a person, an event, a detail) that the "
    "answer gives, in the answer's own words. If any part of the answer is negative (it says "
    "something is unknown, not given, not found, or did not happen), return an empty list, even "
    "when the answer also names items. Never take an item from the correct items that the answer "
    "does not state itself.\n"
    "matching_score: one number per correct item, in the order given: 1 when the answer states it "
    "(another wording or date format is fine), 0.5 when it states something close but not exact, "
    "0 when it does not state it.\n"
    "explanation: one or two sentences."
)


class _Base(BaseModel):
    identified_items: list[str] = Field(max_length=MAX_ITEMS)
    explanation: str = Field(max_length=600)


class _Scores(BaseModel):
    explanation: str = Field(max_length=600)


_Item = Annotated[str, StringConstraints(max_length=ITEM_CHARS)]


class _BoundedBase(BaseModel):
    identified_items: list[_Item] = Field(max_length=BOUNDED_ITEMS)
    explanation: str = Field(max_length=EXPLANATION_CHARS)


def judgment_model(n_gold: int, with_items: bool = True, bounded: bool = False) -> type[BaseModel]:
    """A schema whose matching_score has exactly n_gold entries, each 0, 0.5 or 1."""
    # pydantic reads a float in a Literal (the schema's enum [0, 0.5, 1]); typing's Literal does not
    score = Literal[0, 0.5, 1]  # type: ignore[valid-type]
    base = (_BoundedBase if bounded else _Base) if with_items else _Scores
    return create_model(
        f"EpBench{'Judgment' if with_items else 'Match'}{'Bounded' if bounded else ''}{n_gold}", __base__=base,
        matching_score=(list[score], Field(min_length=n_gold, max_length=n_gold)),
    )


def bounded_max_tokens(n_gold: int, items: int = BOUNDED_ITEMS) -> int:
    """Tokens enough for the largest reply the bounded schema allows (about 4 characters a token,
    plus quotes, commas and keys), so the grammar, not max_tokens, ends a looping reply."""
    return (items * (ITEM_CHARS // 3 + 4)) + (n_gold * 4) + EXPLANATION_CHARS // 3 + 64


def distinct(items: list[Any]) -> list[str]:
    """Claimed items once each (case and surrounding space ignored), in the judge's order."""
    seen: dict[str, str] = {}
    for x in items:
        t = str(x).strip()
        if t and t.casefold() not in seen:
            seen[t.casefold()] = t
    return list(seen.values())


def typed_judge_messages(question_type: str, gold: list[str], answer: str,
                         chapter_text: str | None) -> list[dict[str, str]]:
    """Version 3: the judge reads the question's type, never its text (see JUDGE_INPUTS)."""
    if chapter_text is not None:
        truth = ("There is one correct item: the whole chapter below. Score 1 if the answer gives "
                 "this chapter's event correctly and in substance, 0.5 if in part, 0 if not.\n\n"
                 f"Chapter:\n{chapter_text}\n")
    else:
        truth = "Correct items (an empty list means there was nothing to find):\n"
    user = (f"Kind of item asked for: {question_type}\n\n{truth}{json.dumps(gold, ensure_ascii=False)}\n\n"
            f"Answer to check:\n{answer}\n\n"
            f"Return the JSON object; matching_score must have exactly {len(gold)} entries.")
    return [{"role": "system", "content": _TYPED_SYSTEM}, {"role": "user", "content": user}]


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
                    chapter_text: str | None = None, rules: EpBenchJudge | int = 1,
                    question_type: str | None = None) -> dict[str, Any]:
    """Raw judge output for the raw gold list, or a recorded failure (never a silent 0).
    Judge `rules` (behaviour.py; a bare version is read through its table): version 2 bounds the
    reply (see BOUNDED_ITEMS) and drops repeated items; 3 is 2 with the question's type
    (`question_type`, required) in place of its text and the empty-list rule on any negative
    statement."""
    rules = EpBenchJudge.of(rules)
    bounded = rules.bounded_reply
    model = judgment_model(len(gold), bounded=bounded)
    if rules.reads_question_type:
        if not question_type:
            raise ValueError("EpBench judge version 3 reads the question's type: give question_type")
        messages = typed_judge_messages(question_type, gold, answer, chapter_text)
    else:
        messages = judge_messages(question, gold, answer, chapter_text)
    try:
        parsed, result = await judge.complete_json(
            messages, model, max_tokens=bounded_max_tokens(len(gold)) if bounded else 600)
    except JsonOutputError as exc:
        return {"judge_error": str(exc), "judge_raw": exc.raw_outputs}
    data = parsed.model_dump()
    return {
        "identified_items": distinct(data["identified_items"]) if bounded else [str(x) for x in data["identified_items"]],
        "matching_score_raw": [float(x) for x in data["matching_score"]],
        "explanation": data["explanation"],
        "judge_cached": result.cached,
    }


# -- two-pass judging ------------------------------------------------------------------------
TWO_PASS_VERSION = "epbench-twopass-v2"

_EXTRACT_SYSTEM = (
    "You read one reply to a question about a story and write down what the reply claims. Return "
    "JSON with one field, asserted_items: every date, place, person or kind of event that the reply "
    "gives as its answer, copied in the reply's own words, one per entry. Leave out what the reply "
    "only repeats from the question, what it says it cannot find, and what it says did not happen. "
    "If the reply declines or says the information is missing, return an empty list."
)

_MATCH_SYSTEM = (
    "You compare two lists. Reference items are the correct answer to a question; claimed items "
    "are what a reply asserted. Return JSON with two fields.\n"
    "matching_score: one number per reference item, in the given order: 1 if some claimed item "
    "names it (synonyms, abbreviations and other date formats count), 0.5 if a claimed item is "
    "close but not exact (the right month but no day, only a surname), 0 if no claimed item "
    "names it. Judge only the claimed items; nothing else was said.\n"
    "explanation: one or two sentences."
)


class _Extraction(BaseModel):
    asserted_items: list[str] = Field(max_length=MAX_ITEMS)


class _BoundedExtraction(BaseModel):
    asserted_items: list[_Item] = Field(max_length=BOUNDED_ITEMS)


def extraction_messages(question: str, answer: str) -> list[dict[str, str]]:
    user = (f"Question:\n{question}\n\nReply:\n{answer}\n\n"
            "Return the JSON object with asserted_items.")
    return [{"role": "system", "content": _EXTRACT_SYSTEM}, {"role": "user", "content": user}]


def matching_messages(question: str, gold: list[str], claimed: list[str]) -> list[dict[str, str]]:
    user = (f"Question:\n{question}\n\nReference items:\n{json.dumps(gold, ensure_ascii=False)}\n\n"
            f"Claimed items:\n{json.dumps(claimed, ensure_ascii=False)}\n\n"
            f"Return the JSON object; matching_score must have exactly {len(gold)} entries.")
    return [{"role": "system", "content": _MATCH_SYSTEM}, {"role": "user", "content": user}]


async def judge_two_pass(judge: ChatModel, question: str, gold: list[str], answer: str,
                         rules: EpBenchJudge | int = 1) -> dict[str, Any]:
    """Pass 1 extracts claims blind to the gold list; pass 2 scores gold items against the claims.

    Pass 2 is skipped (all zeros) when nothing was claimed or there is nothing to find, so a
    refusal can never be credited. Versions 2 and 3 bound the replies alike (version 3's typed
    input is a one-pass protocol; a run refuses two_pass under it, the judge check measures both).
    """
    bounded = EpBenchJudge.of(rules).bounded_reply
    schema: type[_Extraction | _BoundedExtraction] = _BoundedExtraction if bounded else _Extraction
    try:
        ext, r1 = await judge.complete_json(extraction_messages(question, answer), schema,
                                            max_tokens=bounded_max_tokens(0) if bounded else 400)
    except JsonOutputError as exc:
        return {"judge_error": f"pass 1: {exc}", "judge_raw": exc.raw_outputs}
    # no separate "declines" flag: small judges set it on list answers too; an empty list says it
    claimed = distinct(ext.asserted_items) if bounded else list(
        dict.fromkeys(str(x).strip() for x in ext.asserted_items if str(x).strip()))
    out: dict[str, Any] = {"identified_items": claimed, "matching_score_raw": [0.0] * len(gold),
                           "explanation": "nothing claimed" if not claimed else "nothing to find",
                           "judge_cached": r1.cached}
    if not claimed or not gold:
        return out
    try:
        parsed, r2 = await judge.complete_json(matching_messages(question, gold, claimed),
                                               judgment_model(len(gold), with_items=False),
                                               max_tokens=400)
    except JsonOutputError as exc:
        return {"judge_error": f"pass 2: {exc}", "judge_raw": exc.raw_outputs, "identified_items": claimed}
    data = parsed.model_dump()
    out.update(matching_score_raw=[float(x) for x in data["matching_score"]],
               explanation=data["explanation"], judge_cached=r1.cached and r2.cached)
    return out
