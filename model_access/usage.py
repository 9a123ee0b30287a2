"""Usage and cost accounting per pipeline stage, split into fresh (paid now) and cached calls."""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

_stage: contextvars.ContextVar[str] = contextvars.ContextVar("memeval_stage", default="unstaged")
_sink: contextvars.ContextVar[list | None] = contextvars.ContextVar("memeval_call_sink", default=None)


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    """Tag every model call made inside this block (and its tasks) with a stage name."""
    token = _stage.set(name)
    try:
        yield
    finally:
        _stage.reset(token)


def current_stage() -> str:
    return _stage.get()


@contextlib.contextmanager
def collect_calls() -> Iterator[list[dict[str, Any]]]:
    """Collect the calls made inside this block (per question: its own usage line)."""
    calls: list[dict[str, Any]] = []
    token = _sink.set(calls)
    try:
        yield calls
    finally:
        _sink.reset(token)


def summarize_calls(calls: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in calls:
        e = out.setdefault(c["stage"], {"calls": 0, "fresh_calls": 0, "prompt_tokens": 0,
                                        "completion_tokens": 0})
        e["calls"] += 1
        e["fresh_calls"] += 0 if c["cached"] else 1
        e["prompt_tokens"] += c["prompt_tokens"]
        e["completion_tokens"] += c["completion_tokens"]
    return out


@dataclass
class Price:
    """USD per one million tokens."""

    input: float = 0.0
    output: float = 0.0
    cached_input: float | None = None


@dataclass
class _Bucket:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": round(self.cost_usd, 6),
        }


@dataclass
class UsageLedger:
    """Thread-safe tally keyed by (stage, model, fresh|cached)."""

    prices: dict[str, Price] = field(default_factory=dict)
    price_table_version: str = "unversioned"
    _rows: dict[tuple[str, str, str], _Bucket] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    listeners: list[Callable[[], None]] = field(default_factory=list)  # e.g. a progress bar

    def price_for(self, model: str) -> Price | None:
        return self.prices.get(model)

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        price = self.price_for(model)
        if price is None:
            return 0.0
        return (prompt_tokens * price.input + completion_tokens * price.output) / 1_000_000

    def record(
        self,
        model: str,
        prompt_tokens: int,
        completion_tokens: int,
        cached: bool,
        stage_name: str | None = None,
    ) -> None:
        key = (stage_name or current_stage(), model, "cached" if cached else "fresh")
        sink = _sink.get()
        if sink is not None:
            sink.append({"stage": key[0], "model": model, "prompt_tokens": prompt_tokens,
                         "completion_tokens": completion_tokens, "cached": cached})
        with self._lock:
            bucket = self._rows.setdefault(key, _Bucket())
            bucket.calls += 1
            bucket.prompt_tokens += prompt_tokens
            bucket.completion_tokens += completion_tokens
            bucket.cost_usd += self.cost(model, prompt_tokens, completion_tokens)
        for listener in self.listeners:
            listener()

    def tally(self) -> tuple[int, int, float]:
        """(fresh calls, cached calls, USD paid now) so far, cheaply (for progress displays)."""
        with self._lock:
            fresh = sum(b.calls for (_, _, k), b in self._rows.items() if k == "fresh")
            cached = sum(b.calls for (_, _, k), b in self._rows.items() if k == "cached")
            cost = sum(b.cost_usd for (_, _, k), b in self._rows.items() if k == "fresh")
        return fresh, cached, cost

    def fresh_calls(self) -> int:
        with self._lock:
            return sum(b.calls for (_, _, kind), b in self._rows.items() if kind == "fresh")

    def summary(self) -> dict[str, Any]:
        """Shape: {stages: {stage: {fresh: {...}, cached: {...}, by_model: {...}}}, totals: {...}}."""
        with self._lock:
            rows = dict(self._rows)
        stages: dict[str, Any] = {}
        totals = {"fresh": _Bucket(), "cached": _Bucket()}
        for (stage_name, model, kind), b in sorted(rows.items()):
            entry = stages.setdefault(
                stage_name, {"fresh": _Bucket(), "cached": _Bucket(), "by_model": {}}
            )
            for target in (entry[kind], totals[kind]):
                target.calls += b.calls
                target.prompt_tokens += b.prompt_tokens
                target.completion_tokens += b.completion_tokens
                target.cost_usd += b.cost_usd
            entry["by_model"].setdefault(model, {})[kind] = b.as_dict()
        out = {
            name: {"fresh": e["fresh"].as_dict(), "cached": e["cached"].as_dict(), "by_model": e["by_model"]}
            for name, e in stages.items()
        }
        unpriced = sorted({m for (_, m, _) in rows if m not in self.prices})
        return {
            "price_table": self.price_table_version,
            "unpriced_models": unpriced,
            "stages": out,
            "totals": {k: v.as_dict() for k, v in totals.items()},
            "note": "cost_usd of 'cached' is what those calls cost when first paid; nothing was paid now",
        }
