"""Pydantic output schemas for every structured GSW call, with every list and string bounded.

Greedy decoding under a JSON grammar can loop on small local models; the bounds appear in the
JSON schema (maxItems/maxLength, which the grammar enforces) and are also applied by truncation
before validation, so an over-long reply from an unconstrained model is trimmed, not rejected.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field


def _truncate(n: int) -> BeforeValidator:
    return BeforeValidator(lambda v: v[:n] if isinstance(v, (list, str)) else v)


def Short(n: int) -> Any:  # noqa: N802 - reads like a type
    """A string of at most n characters (longer replies are cut)."""
    return Annotated[str, _truncate(n), Field(max_length=n)]


def Bounded(item: Any, n: int) -> Any:  # noqa: N802 - reads like a type
    """A list of at most n items (longer replies are cut)."""
    return Annotated[list[item], _truncate(n), Field(max_length=n)]


QUESTION_KINDS = ("who", "whom", "what", "where", "when", "how", "why", "other")
_KIND_ALIASES = {"whose": "who", "which": "what", "with whom": "whom", "to whom": "whom", "for whom": "whom",
                 "by whom": "who", "what time": "when", "how long": "when", "how often": "when",
                 "where to": "where", "where from": "where", "from where": "where", "whither": "where",
                 "how much": "how", "how many": "how", "in what way": "how", "for what": "why",
                 "what for": "why", "why not": "why", "whom to": "whom", "whence": "where"}


def normalise_kind(value: Any) -> str:
    """A model's question word as one of QUESTION_KINDS: case, punctuation and common variants
    ("Whose", "with whom?", "how many") are mapped; anything else becomes "other", so an odd
    word never fails the validation of a whole chunk."""
    text = " ".join(str(value or "").lower().replace("?", " ").replace("_", " ").replace("-", " ").split())
    if text in QUESTION_KINDS:
        return text
    if text in _KIND_ALIASES:
        return _KIND_ALIASES[text]
    first = text.split(" ", 1)[0] if text else ""
    return first if first in QUESTION_KINDS else _KIND_ALIASES.get(first, "other")


QuestionKind = Annotated[str, BeforeValidator(normalise_kind),
                         Field(json_schema_extra={"enum": list(QUESTION_KINDS)})]


class OpRole(BaseModel):
    role: Short(80)
    states: Bounded(Short(80), 5) = Field(default_factory=list)


class OpEntity(BaseModel):
    id: Short(12)
    name: Short(100)
    roles: Bounded(OpRole, 4) = Field(default_factory=list)


class OpQuestion(BaseModel):
    kind: QuestionKind
    question: Short(160)
    answer_entity_ids: Bounded(Short(12), 6) = Field(default_factory=list)
    answer_text: Short(160) = ""


class OpVerb(BaseModel):
    phrase: Short(100)
    questions: Bounded(OpQuestion, 6) = Field(default_factory=list)


class OpForward(BaseModel):
    """A predictive question: what the passage sets up ("When will the regatta be rescheduled?")."""

    question: Short(160)
    entity_ids: Bounded(Short(12), 6) = Field(default_factory=list)


class OperatorOutput(BaseModel):
    """One chunk's semantic map: entities with roles and states, verb phrases with valences,
    and predictive questions about what may come next."""

    entities: Bounded(OpEntity, 24) = Field(default_factory=list)
    verb_phrases: Bounded(OpVerb, 12) = Field(default_factory=list)
    forward_questions: Bounded(OpForward, 3) = Field(default_factory=list)


class STLink(BaseModel):
    """Entities the passage puts at one place (or time); value null when it names none."""

    kind: Literal["space", "time"]
    value: Short(120) | None = None
    entity_ids: Bounded(Short(12), 16) = Field(default_factory=list)


class SpaceTimeOutput(BaseModel):
    """Groups of entities sharing a place or a time in one chunk."""

    links: Bounded(STLink, 10) = Field(default_factory=list)


class FFAnswer(BaseModel):
    id: Short(8)
    answer: Short(160) = ""
    entity_names: Bounded(Short(100), 6) = Field(default_factory=list)


class FFAnswers(BaseModel):
    """Answers to earlier chunks' open (forward-falling) questions from a new chunk."""

    answers: Bounded(FFAnswer, 16) = Field(default_factory=list)


class SameEntity(BaseModel):
    same: bool


class QuestionEntities(BaseModel):
    entities: Bounded(Short(100), 8) = Field(default_factory=list)
