"""A package method's documented model of its calls, for `memeval estimate` without its environment.

A package that runs in its own environment decides its calls from its own replies (entities found,
communities formed), so it cannot be dry-run like the framework's methods. Its class declares
`cost_model` (a `CostModel`); the harness (harness/estimate_baselines.py) turns it into call
records per chunk and per question. Plain data here, so the method layer can declare it and the
harness can read it without either importing the other's code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class IndexCall:
    """One kind of index-time (or query-time) call: how many per chunk, prompt overhead and reply size."""

    what: str
    per_chunk: float
    template_tokens: int
    output_tokens: int
    includes_chunk: bool = True  # the chunk's own text is in the prompt


@dataclass(frozen=True)
class CostModel:
    """What one package sends: per chunk at index time, per question at query time.

    - `chunk`: (size, overlap) in tokens that the package splits each unit into; None: one chunk a unit;
    - `calls` / `query_calls`: the index-time calls per chunk, the query-time calls per question;
    - `context_tokens`: the package's own context budget (None: the cap alone bounds it);
    - `embed_per_chunk`: tokens embedded per chunk (its text and what it extracted);
    - `uncapped_tokens`: context tokens the package adds beyond the capped units (graph text);
    - `assumes` / `not_modelled`: parameter values the model prices (a config naming another
      value is refused) and a sentence saying what the other values do that is not modelled.
    """

    calls: tuple[IndexCall, ...]
    chunk: tuple[int, int] | None = None
    query_calls: tuple[IndexCall, ...] = ()
    context_tokens: int | None = None
    embed_per_chunk: int = 0
    uncapped_tokens: int = 0
    assumes: Mapping[str, Any] = field(default_factory=dict)
    not_modelled: str = ""
