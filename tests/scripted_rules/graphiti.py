"""Scripted replies to Graphiti's (graphiti-core 0.31.2) prompts: valid JSON for each response model.

Each rule matches a system-prompt sentence only that prompt has. Entities are the speakers of
'Name: text' lines and capitalised words of the current episode; facts link a speaker to each
entity their line names, with a few words of the line, so the graph is small, real and
searchable. Deterministic: the same prompt always gets the same reply.
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
         "Bye", "Good", "Congrats", "Oh", "Awesome", "Nice", "Really", "Glad", "Sounds", "Take", "See", "Let"}


def _user(messages: Messages) -> str:
    return next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")


def _between(text: str, tag: str) -> str:
    m = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    return m.group(1) if m else ""


def _current(text: str) -> str:
    for tag in ("CURRENT MESSAGE", "CURRENT_MESSAGE", "TEXT", "JSON"):
        body = _between(text, tag)
        if body:
            return body
    return ""


def _entities(body: str, limit: int = 6) -> list[str]:
    names = [m.group(1) for m in _SPEAKER.finditer(body)]
    names += [w for w in _WORD.findall(body) if w.split()[0] not in _SKIP]
    return list(dict.fromkeys(names))[:limit]


def _extract_nodes(messages: Messages, req: dict[str, Any]) -> str:
    names = _entities(_current(_user(messages)))
    return json.dumps({"extracted_entities": [{"name": n, "entity_type_id": 0, "episode_indices": [0]}
                                              for n in names]})


def _json_block(text: str, tag: str) -> Any:
    try:
        return json.loads(_between(text, tag) or "[]")
    except ValueError:
        return []


def _dedupe_nodes(messages: Messages, req: dict[str, Any]) -> str:
    user = _user(messages)
    new = _json_block(user, "ENTITIES")
    existing = {str(c.get("name", "")).lower(): c.get("candidate_id") for c in _json_block(user, "EXISTING ENTITIES")}
    return json.dumps({"entity_resolutions": [
        {"id": e.get("id", i), "name": e.get("name", ""),
         "duplicate_candidate_id": existing.get(str(e.get("name", "")).lower(), -1)}
        for i, e in enumerate(new)]})


def _extract_edges(messages: Messages, req: dict[str, Any]) -> str:
    user = _user(messages)
    names = [n.get("name", "") for n in _json_block(user, "ENTITIES")]
    when = _between(user, "REFERENCE_TIME").split("#")[0].strip()
    edges: list[dict[str, Any]] = []
    for m in _SPEAKER.finditer(_current(user)):
        speaker, line = m.group(1), m.group(2)
        for other in names:
            if other != speaker and speaker in names and other in line and len(edges) < 6:
                words = " ".join(line.split()[:8])
                edges.append({"source_entity_name": speaker, "target_entity_name": other,
                              "relation_type": "MENTIONS", "fact": f"{speaker} talked about {other}: {words}",
                              "valid_at": when or None, "invalid_at": None, "episode_indices": [0]})
    if not edges:  # plain text (a chapter): the first two entities of each sentence that names two
        for sentence in re.split(r"(?<=[.!?])\s+", _current(user)):
            pair = [n for n in names if n in sentence][:2]
            if len(pair) == 2 and len(edges) < 6:
                edges.append({"source_entity_name": pair[0], "target_entity_name": pair[1],
                              "relation_type": "APPEARS_WITH",
                              "fact": f"{pair[0]} appears with {pair[1]}: {' '.join(sentence.split()[:8])}",
                              "valid_at": when or None, "invalid_at": None, "episode_indices": [0]})
    return json.dumps({"edges": edges})


def _dedupe_edges(messages: Messages, req: dict[str, Any]) -> str:
    user = _user(messages)
    new = _between(user, "NEW FACT").strip()
    same = re.findall(r"'idx': (\d+), 'fact': '([^']*)'", _between(user, "EXISTING FACTS"))
    return json.dumps({"duplicate_facts": [int(i) for i, f in same if f == new], "contradicted_facts": []})


def _timestamps(messages: Messages, req: dict[str, Any]) -> str:
    if "list of FACTS" in _user(messages):
        count = len(re.findall(r'"fact"', _user(messages)))
        return json.dumps({"timestamps": [{"valid_at": None, "invalid_at": None}] * count})
    return json.dumps({"valid_at": None, "invalid_at": None})


def _summaries(messages: Messages, req: dict[str, Any]) -> str:
    user = _user(messages)
    names = [e.get("name", "") for e in _json_block(user, "ENTITIES")]
    return json.dumps({"summaries": [{"name": n, "summary": f"{n} takes part in the conversation."}
                                     for n in names if n]})


RULES = [
    (r"You are an entity extraction specialist for", _extract_nodes),
    (r"You are an entity deduplication assistant\. NEVER fabricate entity names", _dedupe_nodes),
    (r"You are an expert fact extractor that extracts fact triples from text", _extract_edges),
    (r"You are a fact deduplication assistant\. NEVER mark facts as contradicted", _dedupe_edges),
    (r"You extract temporal bounds from facts\. NEVER hallucinate dates", _timestamps),
    (r"You are a helpful assistant that generates concise entity summaries|"
     r"You maintain detailed, information-dense entity memories from episode text", _summaries),
]
