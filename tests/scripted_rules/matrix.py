"""Scripted replies for the judge-matrix criteria (evaluation/judge_matrix/criteria.py).

generous: CORRECT when the reply shares any content word with the reference (declines, for an
unanswerable question); per-type: CORRECT
when the reply has every word of the reference (of every item of a list, each ';'-separated), and for
an unanswerable question when the reply declines. So generous never scores below per-type.
"""

from __future__ import annotations

import json
import re
from typing import Any

_STOP = frozenset({"a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "is", "was", "by", "with",
                   "from", "as", "it", "this", "that"})
_DECLINE = re.compile(r"\b(cannot|can't|not mentioned|do not know|no information)\b", re.I)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP}


def _parts(user: str) -> tuple[str, str]:
    ref = re.search(r"\nReference answer: (.*?)\nReply to grade: ", user, re.S)
    reply = re.search(r"\nReply to grade: (.*)\n\nReturn the JSON object\.", user, re.S)
    return (ref.group(1) if ref else ""), (reply.group(1) if reply else "")


def _label(ok: bool) -> str:
    return json.dumps({"reasoning": "scripted", "label": "CORRECT" if ok else "WRONG"})


def generous(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    ref, reply = _parts(messages[-1]["content"])
    if ref.startswith("nothing:"):  # an unanswerable question (evaluation/adapters.py NOTHING)
        return _label(bool(_DECLINE.search(reply)))
    return _label(bool(_words(ref) & _words(reply)))


def per_type(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    ref, reply = _parts(messages[-1]["content"])
    if "cannot be answered from the material" in messages[0]["content"]:
        return _label(bool(_DECLINE.search(reply)))
    items = [_words(p) for p in ref.split(";") if _words(p)]
    return _label(bool(items) and all(i <= _words(reply) for i in items))


RULES = [
    (r"You check whether a reply to a question is on the right track", generous),
    (r"by the rule for this kind of question", per_type),
]
