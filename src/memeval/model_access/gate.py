"""The one gate every paid model call passes: chat completions, embeddings and Batch API calls.

Why one place: each of these used to re-implement the same sequence, and a rule added to one
(the budget, a replay's refusal, the usage journal) could be forgotten in another. The order is

    cache lookup -> in-flight lock (re-read) -> dry run or replay -> budget -> Batch API queue
    or concurrency slot (with retries) -> usage ledger -> cache write

`claim` holds the first two steps, `pay` the rest. Clients build the request, its cache key and
the conversion of a reply; the gate decides whether and how it is paid for. How a run pays
(`CallSettings`: budget, dry recorder, batch queue) is given when a client is built, never
written onto it afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .budget import Budget
from .cache import CacheBase, cache_key
from .retry import with_retries
from .usage import UsageLedger

T = TypeVar("T")


@dataclass(frozen=True)
class CallSettings:
    """How one run pays for its calls; shared by its clients and given to them at construction.

    `dry`: a recorder with the `chat`/`hit`/`embed` protocol (model_access.dry.DryRecorder for a
    cost estimate, harness.replay.Replay for a strict replay): a fresh call is counted or refused
    there, never sent and never cached. `batch`: a model_access.batch.BatchQueue; chat calls made
    in its stages are queued for the Batch API (embeddings never are).
    """

    budget: Budget | None = None
    dry: Any = None
    batch: Any = None


@dataclass
class Paid(Generic[T]):
    """What one paid call gives back: the caller's result, the tokens billed, and the values the
    gate writes to the cache (none for a Batch API call: the queue writes them on collection)."""

    result: T
    prompt_tokens: int = 0
    completion_tokens: int = 0
    values: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Retry:
    """Retries of one call: one concurrency slot per attempt, so a backoff holds no slot."""

    what: str
    max_attempts: int = 6
    base_s: float = 1.0


class CallGate:
    """One client's door to paid calls: its cache, ledger, run settings and concurrency bound."""

    def __init__(self, cache: CacheBase, ledger: UsageLedger, settings: CallSettings | None = None,
                 max_concurrency: int = 8):
        self.cache = cache
        self.ledger = ledger
        self.settings = settings if settings is not None else CallSettings()
        self.max_concurrency = max_concurrency
        # one semaphore per event loop: the baselines' proxy runs copies of a client on its own loop
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = \
            weakref.WeakKeyDictionary()

    @property
    def dry(self) -> Any:
        return self.settings.dry

    def slot(self) -> asyncio.Semaphore:
        """The concurrency bound of this client on the running loop."""
        loop = asyncio.get_running_loop()
        sem = self._slots.get(loop)
        if sem is None:
            sem = self._slots[loop] = asyncio.Semaphore(self.max_concurrency)
        return sem

    def hit(self, who: str, prompt_tokens: int, completion_tokens: int,
                 notice: Callable[[Any], None] | None = None) -> None:
        """Account a cache hit: free, but counted (and shown to a dry recorder that asks)."""
        if self.dry is not None and notice is not None:
            notice(self.dry)
        self.ledger.record(who, prompt_tokens, completion_tokens, cached=True)

    @contextlib.asynccontextmanager
    async def claim(self, keys: list[str]) -> AsyncIterator[list[str]]:
        """Hold the in-flight lock of `keys` (one lock for a group) and yield those still uncached:
        a second job on this node that needs them waits here, then finds them cached."""
        lock = keys[0] if len(keys) == 1 else cache_key({"batch": keys})
        async with self.cache.inflight(lock):
            yield [k for k in keys if self.cache.get(k) is None]

    async def pay(
        self,
        who: str,
        tokens: tuple[int, int],
        connect: Callable[[], Callable[[], Awaitable[Any]]],
        read: Callable[[Any], Paid[T]],
        *,
        dry: Callable[[Any], T],
        retry: Retry | None = None,
        batched: Callable[[Any], Awaitable[Paid[T]]] | None = None,
    ) -> T:
        """Pay for one call whose keys the caller has claimed, and cache what it returned.

        `tokens`: (prompt, worst-case output) the budget reserves. `connect()` readies the
        endpoint (an API key is needed from here on) and returns one attempt; `read` turns its
        reply into a Paid. `dry(recorder)` answers instead when the run is a dry run or a
        replay. `batched(queue)` is the Batch API route, taken in the queue's stages.
        """
        if self.dry is not None:  # a cost estimate counts it, a replay refuses it: nothing is sent
            return dry(self.dry)
        attempt = connect()
        queue = self.settings.batch
        via_batch = batched is not None and queue is not None and queue.covers()
        budget = self.settings.budget
        guard = budget if budget is not None and budget.limit_usd is not None else None
        reserved = await guard.reserve(who, *tokens) if guard else 0.0
        paid: Paid[T] | None = None
        try:
            if via_batch:
                assert batched is not None
                paid = await batched(queue)
            else:
                paid = read(await self._send(attempt, retry))
        finally:
            if guard:  # a batch is billed at the standard price: the guard stays on the safe side
                guard.settle(reserved, who, paid.prompt_tokens if paid else 0, paid.completion_tokens if paid else 0)
        self.ledger.record(who, paid.prompt_tokens, paid.completion_tokens, cached=False)  # journaled first
        for key, value in paid.values.items():
            self.cache.put(key, value)
        return paid.result

    async def _send(self, attempt: Callable[[], Awaitable[Any]], retry: Retry | None) -> Any:
        async def in_slot() -> Any:
            async with self.slot():
                return await attempt()

        if retry is None:  # the client retries inside its own call
            return await in_slot()
        return await with_retries(in_slot, what=retry.what, max_attempts=retry.max_attempts, base_s=retry.base_s)
