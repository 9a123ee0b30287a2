"""Scripted replies for the LoCoMo and LongMemEval prompts (answering model and judges).

The answering rule quotes the context line that shares most words with the question (or
declines when none does); the judges credit a reply that overlaps the gold answer. Crude, but
deterministic, and it exercises every branch: correct, wrong, declined, abstention.
"""

from __future__ import annotations

import json
import re
from typing import Any

_STOP_WORDS = ("a an the and or of to in on at for is was did do does what when where who how "
               "which why with her his their my i you me it that this be by from as has have had are were")
_STOP = frozenset(_STOP_WORDS.split(" "))


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP}


def _overlap(a: str, b: str) -> float:
    wa, wb = _words(a), _words(b)
    return len(wa & wb) / len(wb) if wb else 0.0


def _best_line(context: str, question: str) -> str | None:
    best, score = None, 0
    for line in context.splitlines():
        if ":" not in line or line.startswith("###"):
            continue
        s = len(_words(line) & _words(question))
        if s > score:
            best, score = line.split(":", 1)[1].strip(), s
    return " ".join(best.split()[:15]) if best else None


def _between(text: str, start: str, end: str) -> str:
    m = re.search(re.escape(start) + r"(.*?)" + re.escape(end), text, re.S)
    return m.group(1).strip() if m else ""


def locomo_answer(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    user = messages[-1]["content"]
    context = _between(user, "Conversation sessions:\n", "\n\nQuestion:")
    question = _between(user, "Question:", "\nShort answer:")
    return _best_line(context, question) or "Not mentioned in the conversation"


def locomo_judge(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    user = messages[-1]["content"]
    gold = _between(user, "Gold answer:", "\nReply to grade:")
    reply = _between(user, "Reply to grade:", "\n\nReturn the JSON")
    if gold.startswith("the conversation does not contain this"):
        ok = "not mentioned" in reply.lower()
    else:
        ok = gold.lower() in reply.lower() or _overlap(reply, gold) >= 0.5
    return json.dumps({"reasoning": "scripted", "label": "CORRECT" if ok else "WRONG"})


def lme_answer(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    user = messages[-1]["content"]
    context = _between(user, "Chat history:\n", "\n\nCurrent date:")
    question = _between(user, "\nQuestion:", "\nAnswer:")
    return _best_line(context, question) or "I do not know."


def lme_judge(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    user = messages[-1]["content"]
    reply = _between(user, "Assistant reply:", "\n\nIs the reply correct?")
    if "Why it cannot be answered:" in user:
        ok = "do not know" in reply.lower()
    else:
        gold = re.search(r"\n(?:Correct answer|Rubric): (.*?)\nAssistant reply:", user, re.S)
        g = gold.group(1) if gold else ""
        ok = g.lower() in reply.lower() or _overlap(reply, g) >= 0.5
    return "Yes." if ok else "No."


RULES = [
    (r"You grade a reply to a question about a conversation between two people", locomo_judge),
    (r"You answer questions about a long conversation between two people", locomo_answer),
    (r"You are grading a chat assistant's reply to a question about the user's own past", lme_judge),
    (r"You are a chat assistant with a memory of earlier chat sessions", lme_answer),
]
