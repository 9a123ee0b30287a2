"""Scripted replies for the two-pass EpBench judge prompts (evaluation/epbench/judge.py) and the
order judge of Chronological Awareness (evaluation/epbench/order.py).

Pass 1 (claims, blind to the gold list): the reply's comma / "and" separated parts, or nothing
when it declines. Pass 2 (matching): a reference item scores 1 when some claimed item contains
it, case-insensitively. Deterministic, so tests can predict every score.
"""

from __future__ import annotations

import json
import re
from typing import Any

_DECLINE = re.compile(r"\b(cannot|can't|could not|no information|not mentioned|does not)\b", re.I)


def _extract(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    user = messages[-1]["content"]
    m = re.search(r"\nReply:\n(.*)\n\nReturn the JSON object with asserted_items", user, re.S)
    reply = m.group(1).strip() if m else ""
    if not reply or _DECLINE.search(reply):
        return json.dumps({"asserted_items": []})
    parts = [p.strip(" .") for p in re.split(r",\s*(?:and\s+)?|\s+and\s+|\n", reply)]
    return json.dumps({"asserted_items": [p for p in parts if p][:10]})


def _match(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    user = messages[-1]["content"]
    gold = json.loads(re.search(r"Reference items:\n(\[.*?\])\n", user, re.S).group(1))
    claimed = json.loads(re.search(r"Claimed items:\n(\[.*?\])\n", user, re.S).group(1))
    scores = [1 if any(g.lower() in c.lower() for c in claimed) else 0 for g in gold]
    return json.dumps({"matching_score": scores, "explanation": "scripted two-pass match"})


def _order(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    """Found items sorted by where the answer states them; each maps to the first unused reference
    item that it contains or that contains it (case-insensitive), else -1."""
    user = messages[-1]["content"]
    ref_block = re.search(r"Reference list \(correct order\):\n(.*?)\n\nAnswer:\n", user, re.S).group(1)
    refs = [line.split(": ", 1)[1] for line in ref_block.splitlines()]
    answer = re.search(r"\n\nAnswer:\n(.*)\n\nFound items:\n", user, re.S).group(1).lower()
    found = json.loads(re.search(r"Found items:\n(\[.*?\])\n", user, re.S).group(1))
    found.sort(key=lambda f: answer.find(f.lower()) if f.lower() in answer else len(answer))
    return _mapping(refs, found)


def _order_v2(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    """Order judge version 2 (no answer shown): the items in the order given, each mapped as _order does."""
    user = messages[-1]["content"]
    ref_block = re.search(r"Reference list:\n(.*?)\n\nItems, in this order:\n", user, re.S).group(1)
    refs = [line.split(": ", 1)[1] for line in ref_block.splitlines()]
    items = re.search(r"Items, in this order:\n(.*?)\n\nReturn the JSON", user, re.S).group(1)
    return _mapping(refs, [line[2:] for line in items.splitlines()])


def _mapping(refs: list[str], found: list[str]) -> str:
    used: set[int] = set()
    mapping = []
    for f in found:
        idx = next((i for i, r in enumerate(refs)
                    if i not in used and (r.lower() in f.lower() or f.lower() in r.lower())), -1)
        if idx >= 0:
            used.add(idx)
        mapping.append({"item": f, "reference_index": idx})
    return json.dumps({"mapping": mapping, "explanation": "scripted order"})


RULES = [
    (r"You check the order of a list answer", _order),
    (r"You match items to a numbered reference list", _order_v2),
    (r"You read one reply to a question about a story and write down what the reply claims", _extract),
    (r"You compare two lists\. Reference items are the correct answer", _match),
]
