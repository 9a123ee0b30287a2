"""Structured replies in a caller's own text layout (a line format instead of JSON).

JSON spends a large share of a reply's tokens on keys, quotes and brackets; a caller whose
output is a small record tree can ask for a compact text layout instead and parse it into the
same pydantic model. A `TextFormat` says how: `decode` turns a reply into the validated model or
raises ValueError naming what is wrong (the repair loop shows that message to the model),
`encode` writes a model in the layout (dry-run placeholders, worked examples), and `grammar` is
a GBNF grammar of the layout for endpoints that constrain decoding with one (llama.cpp's server
takes it in the request's `grammar` field). Endpoints without grammars get plain text, parsed
and repaired the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

GRAMMAR_CHOICES = ("auto", "gbnf", "none")
_EXTRA_BODY = ("grammar",)  # request fields the openai SDK does not know: sent as extra_body


@dataclass(frozen=True)
class TextFormat(Generic[M]):
    """A reply layout for `ChatModel.complete_format`: its name (in error messages), the
    model it decodes to, the decoder and encoder, and its GBNF grammar (None: unconstrained).
    `tokens_vs_json`: o200k tokens of a reply in this layout per token of the same content as
    compact JSON, as measured on real replies; a cost estimate scales its JSON-calibrated output
    prior by it (None: unmeasured, no scaling)."""

    name: str
    model: type[M]
    decode: Callable[[str], M]
    encode: Callable[[M], str]
    grammar: str | None = None
    tokens_vs_json: float | None = None


def sdk_arguments(req: dict[str, Any]) -> dict[str, Any]:
    """A request as the openai SDK's `create` takes it: fields it does not know (llama.cpp's
    `grammar`) travel in `extra_body`, so the request body is exactly `req`."""
    args = {k: v for k, v in req.items() if k not in _EXTRA_BODY}
    extra = {k: req[k] for k in _EXTRA_BODY if k in req}
    if extra:
        args["extra_body"] = extra
    return args
