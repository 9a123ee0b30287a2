"""A progress bar per stage (index, answer, judge): counts, ETA, model calls fresh/cached and the
cost paid so far. Shown only on a terminal, so CI logs stay short; MEMEVAL_PROGRESS=1/0 forces it."""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType

from tqdm import tqdm

from memeval.model_access.usage import UsageLedger


def enabled() -> bool:
    forced = os.environ.get("MEMEVAL_PROGRESS")
    if forced is not None:
        return forced not in ("0", "", "false", "no")
    return sys.stderr.isatty()


class StageProgress:
    """`with StageProgress("answer", n, ledger) as bar: ... bar.advance()`."""

    def __init__(self, name: str, total: int, ledger: UsageLedger, unit: str = "question"):
        self.ledger = ledger
        self._last = 0.0
        self.bar = tqdm(total=total, desc=f"{name:<6}", unit=f" {unit}", disable=not enabled(),
                        file=sys.stderr, dynamic_ncols=True, mininterval=0.5)

    def __enter__(self) -> StageProgress:
        if not self.bar.disable:
            self.ledger.listeners.append(self._on_call)
            self._refresh()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._on_call in self.ledger.listeners:
            self.ledger.listeners.remove(self._on_call)
        self._refresh()
        self.bar.close()

    def advance(self, n: int = 1) -> None:
        self._refresh()
        self.bar.update(n)

    def _on_call(self) -> None:
        if time.monotonic() - self._last > 0.5:  # throttled: thousands of calls per stage
            self._refresh()

    def _refresh(self) -> None:
        self._last = time.monotonic()
        if self.bar.disable:
            return
        fresh, cached, cost = self.ledger.tally()
        self.bar.set_postfix_str(f"calls {fresh} fresh / {cached} cached, ${cost:.4f}", refresh=False)
        self.bar.refresh()
