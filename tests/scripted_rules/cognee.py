"""Scripted replies to cognee's (1.6.5) prompts: valid JSON for its KnowledgeGraph and
SummarizedContent models, and the string its start-up connection test asks for.

Each rule matches a system-prompt sentence only that prompt has. Nodes are the speakers of
'Name: text' lines and capitalised words of the chunk; edges link a speaker to each node their
line names, with a description of a few words of the line. Deterministic.
"""

from __future__ import annotations

import json
import re
from typing import Any

Messages = list[dict[str, Any]]
_SPEAKER = re.compile(r"^([A-Z][A-Za-z]+): (.*)$", re.M)
_WORD = re.compile(r"\b[A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})?\b")
_SKIP = {"The", "This", "That", "Then", "They", "There", "When", "What", "Where", "Who", "How", "And", "But",
         "Chapter", "Session", "Hey", "Hi", "Hello", "Thanks", "Thank", "Wow", "Yes", "Yeah", "Great", "Sure",
         "Bye", "Good", "Congrats", "Oh", "Awesome", "Nice", "Really", "Glad", "Sounds", "Take", "See", "Let",
         "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
         "November", "December"}


def _user(messages: Messages) -> str:
    return next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")


def _names(text: str, limit: int = 6) -> list[str]:
    names = [m.group(1) for m in _SPEAKER.finditer(text)]
    names += [w for w in _WORD.findall(text) if w.split()[0] not in _SKIP]
    return list(dict.fromkeys(names))[:limit]


def _graph(messages: Messages, req: dict[str, Any]) -> str:
    text = _user(messages)
    names = _names(text)
    nodes = [{"id": n, "name": n, "type": "Person" if _SPEAKER.search(text) and n in
              {m.group(1) for m in _SPEAKER.finditer(text)} else "Entity", "description": f"{n} in the text."}
             for n in names]
    edges: list[dict[str, Any]] = []
    for m in _SPEAKER.finditer(text):
        speaker, line = m.group(1), m.group(2)
        for other in names:
            if other != speaker and other in line and len(edges) < 6:
                edges.append({"source_node_id": speaker, "target_node_id": other, "relationship_name": "talked_about",
                              "description": f"{speaker} talked about {other}: {' '.join(line.split()[:8])}"})
    if not edges:  # plain text: the first two names of each sentence that names two
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            pair = [n for n in names if n in sentence][:2]
            if len(pair) == 2 and len(edges) < 6:
                edges.append({"source_node_id": pair[0], "target_node_id": pair[1], "relationship_name": "appears_with",
                              "description": f"{pair[0]} appears with {pair[1]}: {' '.join(sentence.split()[:8])}"})
    return json.dumps({"nodes": nodes, "edges": edges})


def _summary(messages: Messages, req: dict[str, Any]) -> str:
    text = _user(messages)
    names = _names(text)
    facts = [f"- {m.group(1)} said: {' '.join(m.group(2).split()[:8])}" for m in list(_SPEAKER.finditer(text))[:3]]
    summary = "This chunk is about:\n- People: " + ", ".join(names or ["nobody named"]) + "\n\nFacts:\n" + "\n".join(
        facts or ["- The text names " + ", ".join(names or ["no one"]) + "."])
    return json.dumps({"summary": summary, "description": ""})


RULES = [
    (r"You are a top-tier algorithm designed for extracting information in structured formats to build a "
     r"knowledge graph", _graph),
    (r"^Summarize the chunk for retrieval\.", _summary),
    (r'^Respond to me with the following string: "test"', lambda m, r: "test"),
]
