"""Output schemas of SEEM's structured calls, kept small for small local models.

Every list and string is bounded in the JSON schema (the grammar enforces it) and also cut
before validation, so an over-long reply from an unconstrained model is trimmed, not rejected.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ..gsw.schemas import Bounded, Short


class EventSlots(BaseModel):
    """One event of a frame: who did what, when (absolute and as written), where, why, how."""

    participants: Bounded(Short(60), 6) = Field(default_factory=list)
    action: Short(160) = ""
    time: Short(40) = ""        # absolute, resolved against the passage date ("2023-05-07"); "" if unknown
    time_raw: Short(60) = ""    # the expression as written ("last Sunday")
    location: Short(80) = ""
    reason: Short(160) = ""     # causality
    method: Short(120) = ""     # manner


class FrameOutput(BaseModel):
    """An Episodic Event Frame as the model writes it (provenance is added by the code)."""

    summary: Short(400) = ""
    events: Bounded(EventSlots, 5) = Field(default_factory=list)


class Quadruple(BaseModel):
    subject: Short(80)
    predicate: Short(60)
    object: Short(80)
    time: Short(40) = ""        # when the relation holds ("" = no time stated)


class FactsOutput(BaseModel):
    facts: Bounded(Quadruple, 10) = Field(default_factory=list)


# Prompt version 2's verdict: the level alone decided, and the 0.5B judge wrote it before its
# reason. Its docstring is part of the JSON schema sent with every judge call (the response
# format), hence of the saved runs' cache keys: leave it as it is.
class FusionVerdict(BaseModel):
    """Whether two frames describe the same event, and how coherently they would merge."""

    level: Literal["strong", "moderate", "weak"]
    reason: Short(200) = ""


Check = Literal["yes", "no", "unclear"]


# Its docstring, too, is sent with every version-3 judge call: an edit is a new prompt version.
class SameEventVerdict(BaseModel):
    """Prompt version 3. Fields in generation order (a JSON grammar writes them in schema
    order): the event's identity slot by slot, then whether it is one event, and only then how
    coherently the two would merge, and last the reason."""

    same_participants: Check
    same_time: Check
    same_place: Check
    same_event: Literal["yes", "no"]
    level: Literal["strong", "moderate", "weak"]
    reason: Short(200) = ""
