"""Scripted reply to EpBench judge version 3 (the question's type, not its text): credit a gold
item the answer contains verbatim, list nothing when the answer says something negative."""

from __future__ import annotations

import json
import re
from typing import Any

NEGATIVE = ("cannot", "not ", "no ", "unknown")


def _typed_judge(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    user = messages[-1]["content"]
    m = re.search(r"\n(\[.*?\])\n\nAnswer to check:\n(.*)\n\nReturn the JSON", user, re.S)
    gold = json.loads(m.group(1)) if m else []
    answer = m.group(2) if m else ""
    found = [g for g in gold if g.lower() in answer.lower()]
    negative = any(w in answer.lower() for w in NEGATIVE)
    items = [] if negative else (found or [answer[:40]])
    return json.dumps({"identified_items": items, "matching_score": [1 if g in found else 0 for g in gold],
                       "explanation": "scripted (typed)"})


RULES = [(r"You check an answer against a list of correct items", _typed_judge)]
