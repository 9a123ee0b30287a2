"""Scripted replies to mem0's extraction prompt (mem0ai 2.2.1, one call per `add`).

The rule matches the role sentence that only mem0's system prompt holds and answers in its JSON
format ({"memory": [{"id", "text", "attributed_to"}]}) with up to three memories per add, each the
observation date then the first 20 words of a new message, copied verbatim so that the harness's
cap audit can trace every memory to its session.
"""

from __future__ import annotations

import json
import re
from typing import Any


def _mem0_extract(messages: list[dict[str, Any]], req: dict[str, Any]) -> str:
    user = messages[-1]["content"] if messages else ""
    new = re.search(r"## New Messages\n(.*?)\n\n## Observation Date\n([^\n]*)", user, re.S)
    if not new:
        return json.dumps({"memory": []})
    date = new.group(2).strip()
    memories = []
    for line in new.group(1).splitlines():
        role, _, content = line.partition(": ")
        words = content.split()
        if role in {"user", "assistant"} and len(words) >= 4:
            memories.append({"id": str(len(memories)), "text": f"On {date}, " + " ".join(words[:20]),
                             "attributed_to": role})
        if len(memories) == 3:
            break
    return json.dumps({"memory": memories})


RULES = [
    (r"You are a Memory Extractor", _mem0_extract),
]
