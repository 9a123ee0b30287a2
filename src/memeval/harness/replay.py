"""Replay a run from the model-call cache alone: record which calls it reads, refuse any it would pay for.

Why this exists: a result bundle ships the cached calls behind its run folders, but run folders
never recorded their cache keys. The keys are found by rerunning the run through the normal
pipeline, and a bundle is verified by rerunning every run against a cache that holds only the
bundle's calls. Both need the pipeline unchanged except for what this module switches on inside
a `replaying()` block:

- every cache read is recorded (chat, embeddings, and the baselines' calls through the loopback
  proxy, whose private client copies share the components' cache and this recorder);
- a call that is not cached raises `CallNotCached`, naming the call, at the point where the
  client would otherwise pay for it: before any client, server or API key is touched;
- the harness therefore starts no local llama.cpp server and checks no API key (nothing is sent).

Refused calls are also kept in `Replay.refused`, so a method that swallows the error (a guard
that counts a failed extraction and goes on) still fails the replay.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NoReturn

from memeval.model_access.cache import CacheBase, ResponseCache, cache_key
from memeval.model_access.usage import current_stage


class CallNotCached(ValueError):
    """A replay met a call missing from the cache. A ValueError so that the baselines' proxy
    answers it with HTTP 400 (a package does not retry that) rather than 502 (it would)."""


@dataclass
class Replay:
    """What one strict replay read, and what it refused. `values` (when given) receives a copy of
    every value read, so an export can write exactly these calls whichever cache they came from."""

    values: ResponseCache | None = None
    keys: set[str] = field(default_factory=set)
    refused: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def wrap(self, cache: CacheBase) -> CacheBase:
        return RecordingCache(cache, self)

    def read(self, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            self.keys.add(key)
        if self.values is not None:
            self.values.put(key, value)

    def refuse(self, what: str) -> NoReturn:
        with self._lock:
            self.refused.append(what)
        raise CallNotCached(f"not in the cache (replay makes no new model call): {what}")

    # -- the `dry` protocol of ChatModel and Embedder (model_access/chat.py, embed.py) --------
    def hit(self, client: Any, req: dict[str, Any], hit: dict[str, Any]) -> None:
        return None

    def chat(self, client: Any, req: dict[str, Any], text_format: Any = None) -> NoReturn:
        key = cache_key(client._key_payload(req)) if hasattr(client, "_key_payload") else "?"
        last = str((req.get("messages") or [{}])[-1].get("content", ""))
        self.refuse(f"chat {client.display_name} [stage {current_stage()}] key {key}: "
                    f"{last[:160]!r}{'...' if len(last) > 160 else ''}")

    def embed(self, client: Any, texts: list[str], dims: int | None,
              keys: list[str] | None = None) -> NoReturn:
        first = texts[0] if texts else ""
        self.refuse(f"embedding {client.display_name} [stage {current_stage()}] of {len(texts)} text(s), "
                    f"first key {(keys or ['?'])[0]}: {first[:120]!r}")


class RecordingCache(CacheBase):
    """Delegates to the real cache and tells the replay every key whose value was read."""

    def __init__(self, inner: CacheBase, replay: Replay):
        self.inner, self.replay = inner, replay
        self.identity = inner.identity

    def inflight(self, key: str) -> contextlib.AbstractAsyncContextManager[None]:
        return self.inner.inflight(key)

    def get(self, key: str) -> dict[str, Any] | None:
        value = self.inner.get(key)
        if value is not None:
            self.replay.read(key, value)
        return value

    def put(self, key: str, value: dict[str, Any]) -> None:
        self.inner.put(key, value)  # never reached in a strict replay: fresh calls are refused

    def items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        return self.inner.items()

    def close(self) -> None:
        self.inner.close()


_active: list[Replay] = []


def active_replay() -> Replay | None:
    """The replay in progress in this process, if any (read by harness.build and harness.pipeline)."""
    return _active[-1] if _active else None


@contextlib.contextmanager
def replaying(replay: Replay) -> Iterator[Replay]:
    """Runs built inside this block replay from the cache only (see the module docstring)."""
    _active.append(replay)
    try:
        yield replay
    finally:
        _active.remove(replay)
