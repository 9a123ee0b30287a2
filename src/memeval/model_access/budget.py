"""A spending limit per invocation: stop cleanly before the call that would exceed it.

Before each paid call the client reserves its worst case (prompt tokens counted with o200k,
plus the full `max_tokens` of output, at the price table's rates); after the call the reservation
is replaced by what the endpoint billed. Concurrent calls therefore can never overshoot the
limit together. When a reservation would exceed it, the guard waits for the calls already in
flight to finish (their replies are paid for, so they are cached), then raises BudgetExceeded;
a rerun with a higher `budget.usd` replays every cached call for free and pays only the rest.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from .errors import ConfigError
from .tokenizer import count_tokens


class BudgetExceeded(ConfigError):
    """The next call would take this invocation's spending over `budget.usd`."""


def prompt_tokens_of(messages: list[dict[str, str]]) -> int:
    """o200k tokens of a chat request (content plus the chat format's ~4 tokens per message)."""
    return sum(count_tokens(str(m.get("content", ""))) + 4 for m in messages) + 3


class Budget:
    """Shared by every client of one run; thread-safe (the baselines' proxy calls from threads)."""

    def __init__(self, limit_usd: float | None, cost: Callable[[str, int, int], float],
                 resume_hint: str = "the same command"):
        if limit_usd is not None and limit_usd < 0:
            raise ConfigError(f"budget.usd must be >= 0 or null, not {limit_usd}")
        self.limit_usd = limit_usd
        self.cost = cost
        self.resume_hint = resume_hint
        self.spent_usd = 0.0
        self.reserved_usd = 0.0
        self.in_flight = 0
        self.tripped: str | None = None
        self._lock = threading.Lock()

    async def reserve(self, model: str, prompt_tokens: int, max_output_tokens: int) -> float:
        """Reserve a call's worst-case cost, or raise BudgetExceeded once in-flight calls finish."""
        worst = self.cost(model, prompt_tokens, max_output_tokens)
        with self._lock:
            if self.limit_usd is None:
                self.in_flight += 1
                return 0.0
            if self.tripped is None and self.spent_usd + self.reserved_usd + worst > self.limit_usd:
                self.tripped = (f"budget.usd={self.limit_usd:g} reached: ${self.spent_usd:.4f} paid "
                                f"this invocation, and the next {model} call (up to ${worst:.4f}) "
                                "would exceed it")
            if self.tripped is None:
                self.reserved_usd += worst
                self.in_flight += 1
                return worst
        while True:  # let the paid calls in flight land in the cache before stopping the run
            with self._lock:
                if self.in_flight == 0:
                    break
            await asyncio.sleep(0.05)
        raise BudgetExceeded(
            f"{self.tripped}. Stopped cleanly: every call paid for is in the model-call cache and "
            f"usage.json is written. To resume, rerun {self.resume_hint} with a higher budget.usd "
            "(or budget.usd=null); cached calls are not paid again.")

    def settle(self, reserved: float, model: str, prompt_tokens: int, completion_tokens: int) -> None:
        """Replace a reservation by the billed cost (0 tokens when the call failed)."""
        with self._lock:
            self.reserved_usd = max(0.0, self.reserved_usd - reserved)
            self.spent_usd += self.cost(model, prompt_tokens, completion_tokens)
            self.in_flight -= 1
