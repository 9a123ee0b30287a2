"""Vanilla: the whole corpus in context, truncated (and recorded) only if the model cannot take it."""

from __future__ import annotations

from typing import Any

from memeval.datasets.types import Corpus, Question

from .base import MemoryMethod, Retrieval, Services, unit_block


class Vanilla(MemoryMethod):
    exempt_from_cap = True
    default_reference = True  # the no-memory baseline: what a paired table compares with by default

    def __init__(self, services: Services, name: str | None = None, overflow: str = "truncate_tail",
                 window_margin: float = 0.85):
        super().__init__(services, name)
        if overflow not in {"truncate_tail", "truncate_head", "error"}:
            raise ValueError("vanilla overflow must be truncate_tail, truncate_head or error")
        self.overflow = overflow
        self.window_margin = window_margin

    def params(self) -> dict[str, Any]:
        return {"overflow": self.overflow, "window_margin": self.window_margin}

    async def build_index(self, corpus: Corpus) -> Corpus:
        return corpus

    async def retrieve(self, index: Corpus, question: Question) -> Retrieval:
        units = list(index.units)
        blocks = [unit_block(index, u.id) for u in units]
        window = self.services.llm.context_window
        budget = int(window * self.window_margin) - self.services.llm.max_tokens if window else None
        dropped: list[str] = []
        if budget is not None:
            sizes = [self.tokens(b) for b in blocks]
            if sum(sizes) > budget:
                if self.overflow == "error":
                    raise RuntimeError(
                        f"vanilla: corpus {index.id} has {sum(sizes)} tokens, more than the "
                        f"{budget} that fit the answering model's window ({window}).")
                order = range(len(units)) if self.overflow == "truncate_tail" else reversed(range(len(units)))
                keep, used = set(), 0
                for i in order:
                    if used + sizes[i] > budget:
                        break
                    keep.add(i)
                    used += sizes[i]
                dropped = [u.id for i, u in enumerate(units) if i not in keep]
                units = [u for i, u in enumerate(units) if i in keep]
                blocks = [b for i, b in enumerate(blocks) if i in keep]
        extras: dict[str, Any] = {}
        if dropped:
            extras = {"truncated": True, "dropped_units": dropped, "overflow": self.overflow}
        return Retrieval("\n\n".join(blocks), [u.id for u in units], extras)
