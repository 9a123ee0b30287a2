"""The CORRECT/WRONG verdict schema free-text judges answer in (the conversations' protocols, a
custom dataset's, the judge matrix's criteria): shared, so no reader of it imports a family."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


# Its name and schema are sent with every judge call and so are part of the cache key: no
# docstring, keep the name, share the alias.
class _Verdict(BaseModel):
    reasoning: str = Field(max_length=800)
    label: Literal["CORRECT", "WRONG"]


Verdict = _Verdict
