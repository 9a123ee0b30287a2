"""One async HTTP client per event loop, closed on the loop that made it.

An httpx-based client (openai.AsyncOpenAI) keeps pooled connections whose transports belong to
the loop that opened them. Left open when `asyncio.run` returns, it is garbage-collected later,
often while the next sweep job's loop runs: its `__del__` then schedules `aclose()` there, which
fails with "Event loop is closed" and prints "Task exception was never retrieved". And one
component is used from two loops at once (the run's, and a loopback proxy's private one), so a
single client swapped on every loop change would drop, unclosed, the other loop's client. Hence
one client per running loop, and `aclose()` from inside each loop before it ends.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class LoopClients(Generic[T]):
    """`get(make)` gives the running loop's client (made by `make` on first use in that loop);
    `aclose()` closes and forgets it. Loops are held weakly: a loop gone takes its entry along.
    The factory comes with each `get`, so an owner's copy (copy.copy) can take `LoopClients()`."""

    def __init__(self) -> None:
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()  # loops in other threads (loopback services) share this

    def get(self, make: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._by_loop.get(loop)
            if client is None:
                client = self._by_loop[loop] = make()
            return client

    def open_count(self) -> int:
        """Clients not yet closed, over every loop still alive (for tests and diagnostics)."""
        with self._lock:
            return len(self._by_loop)

    async def aclose(self) -> None:
        """Close the running loop's client, if this loop made one; other loops' stay open."""
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._by_loop.pop(loop, None)
        if client is None:
            return
        close = getattr(client, "aclose", None) or getattr(client, "close", None)
        if close is not None:
            result = close()
            if inspect.isawaitable(result):
                await result
