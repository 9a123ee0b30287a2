"""Usage and cost accounting per pipeline stage, split into fresh (paid now) and cached calls."""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
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
    _journal_fd: int | None = None
    _invocation: str | None = None

    def attach_journal(self, path: Path, invocation: str) -> None:
        """Append every call from now on to `path` (usage.jsonl) as it completes, so a killed
        run's calls and cost are known; usage.json is rebuilt from this file."""
        self.close_journal()
        self._journal_fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._invocation = invocation
        self._journal({"event": "start"})

    def close_journal(self, finished: bool = True) -> None:
        if self._journal_fd is not None:
            if finished:
                self._journal({"event": "end"})
            os.close(self._journal_fd)
            self._journal_fd = None

    def _journal(self, row: dict[str, Any]) -> None:
        """One write() per line on an O_APPEND file: a kill never leaves half a line behind."""
        if self._journal_fd is not None:
            line = json.dumps({"inv": self._invocation, **row}, separators=(",", ":")) + "\n"
            os.write(self._journal_fd, line.encode("utf-8"))

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
        cost = self.cost(model, prompt_tokens, completion_tokens)
        with self._lock:
            self._add(key, 1, prompt_tokens, completion_tokens, cost)
            self._journal({"stage": key[0], "model": model, "kind": key[2], "prompt_tokens": prompt_tokens,
                           "completion_tokens": completion_tokens, "cost_usd": cost})
        for listener in self.listeners:
            listener()

    def _add(self, key: tuple[str, str, str], calls: int, pt: int, ct: int, cost: float) -> None:
        bucket = self._rows.setdefault(key, _Bucket())
        bucket.calls += calls
        bucket.prompt_tokens += pt
        bucket.completion_tokens += ct
        bucket.cost_usd += cost

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


def read_journal(path: Path) -> list[dict[str, Any]]:
    """usage.jsonl's rows; a torn last line (power loss mid-write) is skipped."""
    rows = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError):
                rows.append(json.loads(line))
    return rows


def usage_from_journal(path: Path, invocation: str | None = None, price_table_version: str = "unversioned",
                       prices: dict[str, Price] | None = None) -> dict[str, Any]:
    """usage.json rebuilt from usage.jsonl: the chosen invocation (default: the last) in the
    usual shape, plus `all_invocations`: every call any invocation of this run folder made,
    killed ones included, which is what the run has cost in total."""
    rows = read_journal(path)
    order = list(dict.fromkeys(r["inv"] for r in rows))
    if not order:
        return UsageLedger(prices=prices or {}, price_table_version=price_table_version).summary()
    invocation = invocation or order[-1]
    ended = {r["inv"] for r in rows if r.get("event") == "end"}

    def ledger_of(selected: set[str]) -> UsageLedger:
        led = UsageLedger(prices=prices or {}, price_table_version=price_table_version)
        for r in rows:
            if r["inv"] in selected and "event" not in r:
                led._add((r["stage"], r["model"], r["kind"]), 1, r["prompt_tokens"],
                         r["completion_tokens"], r["cost_usd"])
        return led

    out = ledger_of({invocation}).summary()
    if prices is None:
        out["unpriced_models"] = []  # unknown from the journal alone; see each model's cost_usd
    everything = ledger_of(set(order)).summary()
    out["invocation"] = {"id": invocation, "finished": invocation in ended}
    out["all_invocations"] = {
        "invocations": len(order),
        "interrupted": [i for i in order if i not in ended and i != invocation],
        "stages": everything["stages"], "totals": everything["totals"],
        "note": "every call of every invocation of this run folder, killed ones included; "
                "'fresh' across invocations is what the run folder has paid in all",
    }
    return out
