"""Scripted replies to the baseline packages' own prompts (GraphRAG, LightRAG, HippoRAG 2).

Each rule matches an instruction sentence that only that package's prompt contains (never text
that could sit in an answer context), and replies with a minimal valid output in the package's
expected format, built from names found in the prompt's own input text, so that indexing
produces a small real graph and querying finds entities in it.
"""

from __future__ import annotations

import json
import re
from typing import Any

Messages = list[dict[str, Any]]


def _text(m: dict[str, Any]) -> str:
    c = m.get("content")
    if isinstance(c, list):
        return "".join(p.get("text", "") for p in c if isinstance(p, dict))
    return c or ""


def _last(messages: Messages) -> str:
    return _text(messages[-1]) if messages else ""


def _names(text: str, limit: int = 4) -> list[str]:
    """Distinct two-word capitalised names (people and places in EpBench chapters)."""
    found = re.findall(r"\b([A-Z][a-z]+ [A-Z][a-z]+)\b", text)
    skip = {"Entity Types", "Input Text", "Real Data", "User Query"}
    return [n for n in dict.fromkeys(found) if n not in skip][:limit]


# -- GraphRAG ------------------------------------------------------------------------------------
def _graphrag_extract(messages: Messages, req: dict[str, Any]) -> str:
    last = _last(messages)
    if "Answer Y if there are still entities" in last:
        return "N"
    if "MANY entities and relationships were missed" in last:
        return "<|COMPLETE|>"
    body = last.split("-Real Data-")[-1]
    body = body.split("Text:", 1)[-1]
    names = [n.upper() for n in _names(body)]
    rows = [f'("entity"<|>{n}<|>PERSON<|>{n.title()} appears in the text)' for n in names]
    rows += [f'("relationship"<|>{a}<|>{b}<|>{a.title()} and {b.title()} appear together<|>5)'
             for a, b in zip(names, names[1:], strict=False)]
    return "\n##\n".join(rows) + "\n<|COMPLETE|>"


def _graphrag_summary(messages: Messages, req: dict[str, Any]) -> str:
    m = re.search(r"Entities: (.*)", _last(messages))
    return f"Summary of {m.group(1).strip() if m else 'the entity'}."


def _graphrag_report(messages: Messages, req: dict[str, Any]) -> str:
    names = _names(_last(messages).split("Text:")[-1], 2) or ["Community"]
    return json.dumps({"title": " and ".join(names), "summary": f"A community around {names[0]}.",
                       "rating": 5.0, "rating_explanation": "scripted",
                       "findings": [{"summary": names[0], "explanation": f"{names[0]} is central."}]})


# -- LightRAG ------------------------------------------------------------------------------------
def _lightrag_extract(messages: Messages, req: dict[str, Any]) -> str:
    last = _last(messages)
    if "identify and extract any missed" in last:
        return "<|COMPLETE|>"
    m = re.search(r"---Input Text---\s*```(.*?)```", last, re.S)
    names = _names(m.group(1) if m else last)
    rows = [f"entity<|#|>{n}<|#|>Person<|#|>{n} appears in the text." for n in names]
    rows += [f"relation<|#|>{a}<|#|>{b}<|#|>together<|#|>{a} and {b} appear together."
             for a, b in zip(names, names[1:], strict=False)]
    return "\n".join(rows + ["<|COMPLETE|>"])


def _lightrag_summary(messages: Messages, req: dict[str, Any]) -> str:
    m = re.search(r"Name: (.*)", _last(messages))
    return f"{m.group(1).strip() if m else 'The entity'} appears in the story."


def _lightrag_keywords(messages: Messages, req: dict[str, Any]) -> str:
    q = _last(messages).split("User Query:")[-1].split("---Output---")[0]
    low = _names(q) or re.findall(r"\b[A-Z][a-z]+\b", q)[:3]
    return json.dumps({"high_level_keywords": ["events"], "low_level_keywords": low})


# -- HippoRAG 2 ----------------------------------------------------------------------------------
def _hippo_ner(messages: Messages, req: dict[str, Any]) -> str:
    return json.dumps({"named_entities": _names(_last(messages))})


def _hippo_triples(messages: Messages, req: dict[str, Any]) -> str:
    last = _last(messages)
    m = re.search(r"```(.*?)```", last, re.S)
    names = _names(m.group(1) if m else last)
    triples = [[a, "appears with", b] for a, b in zip(names, names[1:], strict=False)]
    return json.dumps({"triples": triples})


def _hippo_filter(messages: Messages, req: dict[str, Any]) -> str:
    m = re.search(r"\[\[ ## fact_before_filter ## \]\]\s*(\{.*?\})\s*\n", _last(messages), re.S)
    facts = json.loads(m.group(1))["fact"][:2] if m else []
    return f"[[ ## fact_after_filter ## ]]\n{json.dumps({'fact': facts})}\n\n[[ ## completed ## ]]"


RULES = [
    (r'Format each entity as \("entity"<\|>', _graphrag_extract),
    (r"You are a helpful assistant responsible for generating a comprehensive summary of the data",
     _graphrag_summary),
    (r"Write a comprehensive report of a community", _graphrag_report),
    (r"You are a Knowledge Graph Specialist responsible for extracting entities and relationships",
     _lightrag_extract),
    (r"You are a Knowledge Graph Specialist, proficient in data curation and synthesis", _lightrag_summary),
    (r"You are an expert keyword extractor, specializing in analyzing user queries", _lightrag_keywords),
    (r"Your task is to construct an RDF \(Resource Description Framework\) graph", _hippo_triples),
    (r"Your task is to extract named entities from the given paragraph", _hippo_ner),
    (r"\[\[ ## fact_before_filter ## \]\]", _hippo_filter),
]
