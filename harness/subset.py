"""Deterministic, stratified question subsets (a quick run that still covers every bucket)."""

from __future__ import annotations

import random

from datasets.types import Question


def stratified_subset(questions: list[Question], n: int | None, key: str, seed: int = 0,
                      ids: list[str] | None = None) -> list[Question]:
    """Pick n questions spread evenly over the values of attrs[key]; keep dataset order."""
    if ids:
        wanted = set(map(str, ids))
        missing = wanted - {q.id for q in questions}
        if missing:
            raise ValueError(f"unknown question ids: {sorted(missing)[:10]}")
        return [q for q in questions if q.id in wanted]
    if n is None or n >= len(questions):
        return list(questions)
    rng = random.Random(seed)
    strata: dict[str, list[Question]] = {}
    for q in questions:
        strata.setdefault(str(q.attrs.get(key)), []).append(q)
    pools = {k: rng.sample(v, len(v)) for k, v in sorted(strata.items())}
    chosen: list[Question] = []
    while len(chosen) < n:
        for k in list(pools):
            if pools[k] and len(chosen) < n:
                chosen.append(pools[k].pop())
        if not any(pools.values()):
            break
    keep = {q.id for q in chosen}
    return [q for q in questions if q.id in keep]
