"""Scripted replies for the custom-dataset prompts (answering model and free-text judge).

The answer quotes the sentence of the material that shares most words with the question (or
declines); the judge says CORRECT when the reply contains the gold answer or covers half its
words. Item questions are judged by the EpBench judge rule (gold items found verbatim).
"""

from __future__ import annotations

import json
import re
from typing import Any

_STOP_WORDS = ("a an the and or of to in on at for is was did do does what when where who how which why "
               "with her his their it that this be by from as has have had are were onto")
_STOP = frozenset(_STOP_WORDS.split(" "))


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP}


def _between(text: str, start: str, end: str) -> str:
    m = re.search(re.escape(start) + r"(.*?)" + re.escape(end), text, re.S)
    return m.group(1).strip() if m else ""


def custom_answer(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    user = messages[-1]["content"]
    material = user.split("Material:\n", 1)[1].rsplit("\n\nQuestion:", 1)[0]
    question = _between(user, "Question:", "\nAnswer:")
    best, score = None, 0
    for line in material.splitlines():
        if line.startswith("###"):
            continue
        for sent in re.split(r"(?<=[.!?])\s+", line):
            s = len(_words(sent) & _words(question))
            if s > score:
                best, score = sent.strip(), s
    return best if best and score >= 2 else "I cannot find this in the material."


def custom_text_judge(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    user = messages[-1]["content"]
    gold = _between(user, "Gold answer:", "\nReply to grade:")
    reply = _between(user, "Reply to grade:", "\n\nReturn the JSON")
    wg = _words(gold)
    ok = gold.lower() in reply.lower() or (bool(wg) and len(_words(reply) & wg) / len(wg) >= 0.5)
    return json.dumps({"reasoning": "scripted", "label": "CORRECT" if ok else "WRONG"})


RULES = [
    (r"You grade a reply to a question about a collection of documents", custom_text_judge),
    (r"You answer questions about a collection of documents", custom_answer),
]
