"""Answer checks, from predictions.jsonl: looping answers, copied prompt examples, refusals, hedges.

A copied example is an answer that states the answer prompt's own example value (the run's
prompt version's, Protocol.answer_examples) when the question's context does not: equal to it
("The week before 9 June 2023."), or, for an example with a number in it (a date, a count: a
value no answer states by chance), with it inside a longer answer ("It was the week before
9 June 2023, I think"); a wordy example such as LongMemEval's "last week" counts only when the
whole answer is that phrase. The context test keeps an answer that is right to say it (the
material itself holds the words) out of the count.

A looping answer says one item `loop_item_repeats` times (a list line, a sentence, or a short
comma-separated item; list numbers dropped, dates read as calendar days so "May 3, 2024" stays
one item) or repeats a run of `loop_words` words (model_access.repeat_stop's plain-text rule,
the one that cuts looping replies at the source). A refusal is an answer whose every sentence
declines (evaluation.answer_text), or says in the model's own voice that it has nothing to go on
("I'm sorry, but I don't have any meal prep suggestions": the 1.5B's LongMemEval declines, which
the shared rule splits at ", but" and misses; the grounding rules keep the shared rule, so no
score moves); it counts only on answerable questions, whose gold is neither empty (EpBench's
no-event questions) nor itself a decline (LoCoMo category 5).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from memeval.model_access.repeat_stop import cut_text_repeats

from ..answer_text import find_dates, is_refusal_sentence, normalize, sentences
from ..runs.health_file import Check
from .grading import check, not_measured, pct, share

SCOPE = "answer"
_LIST_MARK = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022])\s*")
_COMMA_ITEM = re.compile(r",\s*|\s+and\s+")
MAX_ITEM_WORDS = 6  # a comma-separated piece this short is a list item, not a clause


def _dates_as_words(text: str) -> str:
    """Each date written as one token, so that its comma never splits a list item."""
    for d in reversed(find_dates(text)):
        a, b = d.span
        text = f"{text[:a]}{d.key.replace('-', '_')}{text[b:]}"
    return text


def items(answer: str) -> list[str]:
    """The answer's items, normalised: list lines, sentences, and short comma-separated items."""
    out: list[str] = []
    for line in answer.split("\n"):
        line = _LIST_MARK.sub("", line).strip()
        for s in sentences(line) if line else []:
            s = _dates_as_words(s)
            parts = [p for p in _COMMA_ITEM.split(s) if p.strip()]
            if len(parts) >= 3 and all(len(p.split()) <= MAX_ITEM_WORDS for p in parts):
                out += parts
            else:
                out.append(s)
    return [k for k in (normalize(x) for x in out) if k]


def loop(answer: str, item_repeats: int, words: int) -> str | None:
    """What repeats in a looping answer ('3x "hazel lewis"' or a word run), None when none."""
    top = Counter(items(answer)).most_common(1)
    if top and top[0][1] >= item_repeats:
        return f"{top[0][1]}x {top[0][0][:60]!r}"
    cut = cut_text_repeats(answer, words)
    return None if cut is None else f"{words} words again: {answer[cut.at:cut.at + 60]!r}"


# "I don't have any (meal prep) suggestions" (first person only, so that "You don't have any
# siblings", a claim about the user, stays an answer), and the request for more that may follow it
NOTHING_TO_GO_ON = re.compile(
    r"\bi (?:do not|don't|did not|didn't) have (?:any |enough |the )?(?:[\w-]+ ){0,3}?"
    r"(?:information|details|data|records?|knowledge|context|suggestions|recommendations|ideas|tips|advice|"
    r"memor(?:y|ies)|access)\b|\b(?:could|can) you (?:please )?(?:provide|share|give) (?:me )?(?:more|additional|some)\b",
    re.I)


def declines(answer: str) -> bool:
    parts = sentences(answer)
    return bool(parts) and all(is_refusal_sentence(s) or NOTHING_TO_GO_ON.search(s) for s in parts)


def answerable(p: dict[str, Any]) -> bool:
    gold = [str(g) for g in (p.get("gold") or []) if str(g).strip()]
    return bool(gold) and not all(declines(g) for g in gold)


def _contains(text: str, phrase: str) -> bool:
    """Whether normalised `text` holds normalised `phrase` as whole words."""
    return f" {phrase} " in f" {text} "


def copied_example(answer: str, context: str, examples: tuple[str, ...]) -> str | None:
    """The prompt example this answer copies (module docstring), None when it copies none."""
    said, given = normalize(answer), normalize(context)
    for example in examples:
        key = normalize(example)
        states = said == key or (any(ch.isdigit() for ch in key) and _contains(said, key))
        if key and states and not _contains(given, key):
            return example
    return None


def answer_checks(predictions: list[dict[str, Any]], examples: tuple[str, ...], th: dict[str, Any]) -> list[Check]:
    n = len(predictions)
    answers = [(str(p.get("question_id")), str(p.get("answer") or "")) for p in predictions]
    loops = [(q, why) for q, a in answers if (why := loop(a, int(th["loop_item_repeats"]), int(th["loop_words"])))]
    first = f"; e.g. {loops[0][0]}: {loops[0][1]}" if loops else ""
    out = [check("looping_answers", SCOPE, share(len(loops), n), th["loops"], f"{pct(len(loops), n)} answers loop{first}")]
    keys = {normalize(e) for e in examples}
    prompted = [p for p in predictions if p.get("answered_by") != "method"]  # sent the shared answer prompt
    copied = [p for p in prompted
              if copied_example(str(p.get("answer") or ""), str(p.get("context_text") or ""), examples)]
    equal = sum(normalize(str(p.get("answer") or "")) in keys for p in copied)
    if keys and predictions and not prompted:
        out.append(not_measured("prompt_example_answers", SCOPE, th["example"],
                                "every answer was written with the method's own prompt (or imported): the shared "
                                "answer prompt and its example were never sent"))
    elif keys:
        first = f"; e.g. {copied[0].get('question_id')}" if copied else ""
        out.append(check("prompt_example_answers", SCOPE, share(len(copied), n), th["example"],
                         f"{pct(len(copied), n)} answers copy the answer prompt's example "
                         f"({', '.join(repr(e) for e in examples)}; {equal} equal to it, the rest state it "
                         f"where their context does not){first}"))
    else:
        out.append(check("prompt_example_answers", SCOPE, None, th["example"],
                         "the answer prompt gives no example value", status="ok"))
    asked = [p for p in predictions if answerable(p)]
    refused = sum(declines(str(p.get("answer") or "")) for p in asked)
    out.append(check("refusals", SCOPE, share(refused, len(asked)), th["refusals"],
                     f"{pct(refused, len(asked))} answerable questions declined"))
    hedged = [p for p in asked if hedges(str(p.get("answer") or ""), str(p.get("question") or ""))]
    first = f"; e.g. {hedged[0].get('question_id')}: {str(hedged[0].get('answer'))[:80]!r}" if hedged else ""
    out.append(check("hedged_answers", SCOPE, share(len(hedged), len(asked)), th["hedges"],
                     f"{pct(len(hedged), len(asked))} short answers offer alternatives the question did not ask "
                     f"for{first}"))
    return out


_OR = re.compile(r"\bor\b(?! (?:not|so|more|less|later)\b)", re.I)
HEDGE_WORDS = 12  # a short answer: a longer one may use "or" in a sentence that is not a hedge


def hedges(answer: str, question: str) -> bool:
    """A short answer that offers alternatives ("July 15 or 16", "counseling or mental health") to a
    question that asks for none (no "or" of its own): whichever is right, a generous judge credits it."""
    return len(answer.split()) <= HEDGE_WORDS and bool(_OR.search(answer)) and not _OR.search(question)
