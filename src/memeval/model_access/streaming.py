"""Streaming a reply so that a repeat-stop rule can end it early (model_access.repeat_stop).

Closing the stream closes the connection, and an OpenAI-compatible server (llama.cpp, vLLM, the
OpenAI API) stops generating for a client that is gone, so the looping tokens are never made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import openai

from .budget import prompt_tokens_of
from .errors import StreamCutShort
from .repeat_stop import scanner_for
from .text_format import sdk_arguments


@dataclass
class _Message:
    content: str


@dataclass
class _Choice:
    message: _Message
    finish_reason: str | None


@dataclass
class _Usage:
    prompt_tokens: int
    completion_tokens: int


@dataclass
class _StreamedReply:
    """A streamed reply in the shape of a chat completion (what `_fresh` reads)."""

    choices: list[_Choice]
    usage: _Usage
    cut_at: int | None


async def streamed_until_repeat(client: openai.AsyncOpenAI, req: dict[str, Any], rule: str) -> _StreamedReply:
    """Stream one reply and close the stream at the rule's first repeat, which stops the
    server's generation there. Completion tokens are the streamed pieces (one token each on
    llama.cpp); a cut reply has no server usage record, so its prompt is counted in o200k."""
    scanner = scanner_for(rule)
    stream = await client.chat.completions.create(**sdk_arguments(req), stream=True,
                                                  stream_options={"include_usage": True})
    pieces, finish, usage, cut = 0, None, None, None
    try:
        async for chunk in stream:
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices:
                finish = choice.finish_reason or finish
                if choice.delta and choice.delta.content:
                    pieces += 1
                    cut = scanner.feed(choice.delta.content)
            if cut is not None:
                break
    finally:
        await stream.close()
    if cut is None and finish is None:
        raise StreamCutShort(f"the stream closed after {pieces} piece(s) without a finish reason")
    if cut is None:  # the last word (or line) is complete only now (the same text as a whole-reply cut)
        cut = scanner.finish()
    if cut is not None:
        return _StreamedReply([_Choice(_Message(cut.text), "repeat_stop")],
                              _Usage(prompt_tokens_of(req["messages"]), pieces), cut.at)
    pt = int(getattr(usage, "prompt_tokens", 0) or 0) or prompt_tokens_of(req["messages"])
    ct = int(getattr(usage, "completion_tokens", 0) or 0) or pieces
    return _StreamedReply([_Choice(_Message(scanner.text), finish)], _Usage(pt, ct), None)
