"""GBNF grammars of the compact wire format (wire.py) for llama.cpp's grammar-constrained decoding.

The bounds are read from the pydantic schemas (maxItems, maxLength, the kind enum), so the
grammar and the JSON schema a `wire: json` run sends constrain the same record tree: a small
model under greedy decoding cannot loop past 24 entities or write a 500-character role. Ids are
e<N>; free text cannot start with a space or a quote, and questions and place/time values hold no
`=` (the answer separator), so every reply the grammar admits decodes. The grammar's language is
the encoder's output for values in that domain (tests check both with llama.cpp's own parser).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .schemas import (
    OpEntity,
    OperatorOutput,
    OpForward,
    OpQuestion,
    OpRole,
    OpVerb,
    SpaceTimeOutput,
    STLink,
)


def _prop(model: type[BaseModel], field: str) -> dict[str, Any]:
    """A field's JSON schema (a nullable field's non-null branch)."""
    prop = model.model_json_schema()["properties"][field]
    return next((p for p in prop.get("anyOf", []) if p.get("type") != "null"), prop)


def _items(model: type[BaseModel], field: str) -> int:
    return int(_prop(model, field)["maxItems"])


def _length(model: type[BaseModel], field: str) -> int:
    prop = _prop(model, field)
    return int(prop.get("maxLength") or prop["items"]["maxLength"])


def _text(name: str, n: int, no_eq: bool = False) -> str:
    """A rule for 1..n characters on one line, not starting with a space or a quote."""
    eq = "=" if no_eq else ""
    return f'{name} ::= [^ \\n"{eq}] [^\\n{eq}]{{0,{n - 1}}}'


def _id_rule() -> str:
    assert _length(OpEntity, "id") >= 4
    return 'id ::= "e" [1-9] [0-9]{0,2}'  # e1 .. e999


def operator_grammar() -> str:
    kinds = " | ".join(f'"{k}"' for k in OpQuestion.model_json_schema()["properties"]["kind"]["enum"])
    return "\n".join([
        f"root ::= \"none\\n\" | entity{{0,{_items(OperatorOutput, 'entities')}}} "
        f"verb{{0,{_items(OperatorOutput, 'verb_phrases')}}} forward{{0,{_items(OperatorOutput, 'forward_questions')}}}",
        f'entity ::= id " " name "\\n" role{{0,{_items(OpEntity, "roles")}}}',
        f'role ::= " r " role-text "\\n" state{{0,{_items(OpRole, "states")}}}',
        'state ::= " s " state-text "\\n"',
        f'verb ::= "v " phrase "\\n" question{{0,{_items(OpVerb, "questions")}}}',
        'question ::= " " kind " " question-text (" = " answer)? "\\n"',
        f"kind ::= {kinds}",
        "answer ::= ids (\" \" answer-text)? | answer-text",
        f'ids ::= id (" " id){{0,{_items(OpQuestion, "answer_entity_ids") - 1}}}',
        'forward ::= "f " question-text (" = " forward-ids)? "\\n"',
        f'forward-ids ::= id (" " id){{0,{_items(OpForward, "entity_ids") - 1}}}',
        _id_rule(),
        _text("name", _length(OpEntity, "name")),
        _text("role-text", _length(OpRole, "role")),
        _text("state-text", _length(OpRole, "states")),
        _text("phrase", _length(OpVerb, "phrase")),
        _text("question-text", _length(OpQuestion, "question"), no_eq=True),
        _text("answer-text", _length(OpQuestion, "answer_text")),
    ]) + "\n"


def spacetime_grammar() -> str:
    return "\n".join([
        f'root ::= "none\\n" | link{{1,{_items(SpaceTimeOutput, "links")}}}',
        'link ::= ("space" | "time") (" " value)? (" = " ids)? "\\n"',
        f'ids ::= id (" " id){{0,{_items(STLink, "entity_ids") - 1}}}',
        _id_rule(),
        _text("value", _length(STLink, "value"), no_eq=True),
    ]) + "\n"
