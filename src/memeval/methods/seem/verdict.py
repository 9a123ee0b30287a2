"""Reading a fusion judge's reply: does the pair merge, and if not, why not.

Prompt version 2 merged on the level alone (`MERGING`): on LoCoMo conv-30 the 0.5B judge said
"moderate" for 12 of 12 pairs, three times with a reason saying the frames were a different
event. Version 3 asks for the event's identity first (schemas.SameEventVerdict) and merges only
when every part of the reply agrees: same_event "yes", no slot (participants, time, place)
"no", a merging level, and a reason that does not say the frames differ. A reply that
disagrees with itself does not merge, and why is recorded (`refused`) and counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from .schemas import FusionVerdict, SameEventVerdict

MERGING = {"strong", "moderate"}
SLOTS = ("same_participants", "same_time", "same_place")
SCHEMAS: dict[int, type[BaseModel]] = {2: FusionVerdict, 3: SameEventVerdict}

# A reason that says the two frames are not one event (the version-2 prompt's "weak" wording,
# and its variants in the bundled decisions): also what the index counters look for in merges.
CONTRADICTS = re.compile(
    r"\b(?:(?:a |is a |are |describes? a )?different (?:events?|episodes?|people|participants)"
    r"|not the same (?:event|episode)|unrelated|should not be merged|cannot be merged|distinct events?)\b",
    re.I)


@dataclass(frozen=True)
class Verdict:
    level: str
    reason: str
    merge: bool
    refused: str | None = None           # version 3: why a pair did not merge
    check: dict[str, str] | None = None  # version 3: the identity slots and same_event

    def record(self) -> dict[str, Any]:
        """The decision fields beyond level and reason (none under version 2: saved runs'
        memory.json stays as it was written)."""
        if self.check is None:
            return {}
        return {"check": self.check, **({"refused": self.refused} if self.refused else {})}


def read(reply: BaseModel) -> Verdict:
    """The merge decision of a parsed reply of either prompt version."""
    if isinstance(reply, SameEventVerdict):
        return _same_event(reply)
    assert isinstance(reply, FusionVerdict)
    return Verdict(reply.level, reply.reason, reply.level in MERGING)


def _same_event(v: SameEventVerdict) -> Verdict:
    check = {s: getattr(v, s) for s in SLOTS} | {"same_event": v.same_event}
    refused = ("not_same_event" if v.same_event != "yes"
               else "slot_says_no" if "no" in (check[s] for s in SLOTS)
               else "weak" if v.level not in MERGING
               else "reason_says_different" if CONTRADICTS.search(v.reason)
               else None)
    return Verdict(v.level, v.reason, refused is None, refused, check)


def failed(exc: Exception, version: int) -> Verdict:
    """An unusable reply counts as weak, so nothing merges on noise."""
    reason = f"judge failed: {str(exc)[:120]}"
    return Verdict("weak", reason, False, "judge_failed" if version >= 3 else None,
                   None if version < 3 else {})
