"""Deterministic, stratified question subsets (a quick run that still covers every bucket).

The runner draws a run's questions with these (harness/build.py), and the commands that read a
run folder draw them again from its saved config to know which questions the run should hold
(evaluation/runs/completeness.py): one function for both, at the layer both may import."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Mapping
from typing import Any

from memeval.datasets.types import Dataset, Question

NamedSubset = tuple[str, Callable[[Question], bool]]


def named_subsets() -> dict[str, NamedSubset]:
    """Named question subsets: name -> (what it is, which questions it keeps), as the registered
    dataset loaders declare them (a loader class's `named_subsets`). Selected with
    `subset.name=<name>`; subset.n and subset.seed then sample within it (subset.n=null = all of it)."""
    from memeval.plugins import registered  # the loaders' modules import this package's

    found: dict[str, NamedSubset] = {}
    for plugin in registered("dataset").values():
        found.update(getattr(plugin.load(), "named_subsets", None) or {})
    return found


def named_subset(questions: list[Question], name: str) -> list[Question]:
    """The questions of a named subset, in dataset order; a clear error for an unknown name."""
    known = named_subsets()
    if name not in known:
        raise ValueError(f"unknown subset.name {name!r}; known: {', '.join(sorted(known))}")
    return [q for q in questions if known[name][1](q)]


def within_units(dataset: Dataset, questions: list[Question], n: int) -> list[Question]:
    """The questions whose gold units all lie in the first n units of their corpus (questions
    with no gold unit are kept): what a method indexing only n units (`method.max_chapters`)
    can answer. The same selection as scripts/subset_within.py, as a recorded config setting."""
    firsts: dict[str, set[str]] = {}
    keep = []
    for q in questions:
        if q.corpus_id not in firsts:
            units = sorted(dataset.corpus_for(q).units, key=lambda u: u.position)
            firsts[q.corpus_id] = {u.id for u in units[:n]}
        if set(q.gold_units) <= firsts[q.corpus_id]:
            keep.append(q)
    return keep


def first_units(dataset: Dataset, n: int) -> Dataset:
    """The dataset with every corpus cut to its first n units (by position): one setting
    (`subset.index_units`) that bounds what every method indexes, for cheap real-model runs and
    index-health probes. The questions are left to `within_units`, which the harness applies
    with the same n so that no question asks about a unit the index never saw."""
    if n < 1:
        raise ValueError(f"subset.index_units must be at least 1, not {n}")
    corpora = {cid: dataclasses.replace(c, units=tuple(sorted(c.units, key=lambda u: u.position)[:n]))
               for cid, c in dataset.corpora.items()}
    return dataclasses.replace(dataset, corpora=corpora)


def stratified_subset(questions: list[Question], n: int | None, key: str, seed: int = 0,
                      ids: list[str] | None = None,
                      extra: dict[str, int] | None = None) -> list[Question]:
    """Pick n questions spread evenly over the values of attrs[key]; keep dataset order.

    `extra` ({stratum: k}): k more questions in that stratum, drawn on in the same seeded order,
    so the n-question set stays inside the larger one (a paired comparison grows where its
    variance is, and the questions already answered are reused from the cache)."""
    if ids:
        if extra:
            raise ValueError("subset.extra adds to a stratified draw; it cannot be combined with subset.ids")
        wanted = set(map(str, ids))
        missing = wanted - {q.id for q in questions}
        if missing:
            raise ValueError(f"unknown question ids: {sorted(missing)[:10]}")
        return [q for q in questions if q.id in wanted]
    if extra and n is None:
        raise ValueError("subset.extra adds to subset.n's stratified draw; subset.n=null already takes every question")
    if n is None or (n >= len(questions) and not extra):
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
    for stratum, count in (extra or {}).items():
        chosen.extend(_more(pools, stratum, count, key))
    keep = {q.id for q in chosen}
    return [q for q in questions if q.id in keep]


def _more(pools: dict[str, list[Question]], stratum: str, k: int, key: str) -> list[Question]:
    """The next k questions of one stratum's seeded order, or a clear error naming what is left."""
    if stratum not in pools:
        raise ValueError(f"subset.extra names stratum {stratum!r}, which no question has; "
                         f"the values of {key} are: {', '.join(sorted(pools))}")
    if k < 0 or k > len(pools[stratum]):
        raise ValueError(f"subset.extra asks for {k} more questions in {key} {stratum!r}; "
                         f"0 to {len(pools[stratum])} are left after subset.n's draw")
    return [pools[stratum].pop() for _ in range(k)]


def filtered_pool(dataset: Dataset, subset: Mapping[str, Any]) -> tuple[list[Question], list[str]]:
    """The questions the named subset and the gold-unit bound keep (the data already cut to
    `index_units`), and labels saying so; ValueError naming what keeps nothing."""
    pool, labels = list(dataset.questions), []
    name = subset.get("name")
    if name:
        pool = named_subset(pool, str(name))
        what = named_subsets()[str(name)][0]
        if not pool:
            raise ValueError(f"subset.name={name} keeps no question of {dataset.name} ({what}).")
        labels.append(f"subset {name}: {what}")
    n_units = subset.get("within_units")
    n_index = subset.get("index_units")
    if n_index is not None:  # an index of the first N units answers only questions within them
        n_units = int(n_index) if n_units is None else min(int(n_units), int(n_index))
        labels.append(f"each corpus indexed to its first {int(n_index)} units")
    if n_units is not None:
        pool = within_units(dataset, pool, int(n_units))
        labels.append(f"gold units within the first {int(n_units)}")
    return pool, labels


def draw(dataset: Dataset, subset: Mapping[str, Any]) -> tuple[list[Question], list[Question], list[str]]:
    """A run's questions from its `subset` settings (n, seed, ids, name, within_units, index_units,
    extra), as the runner draws them and the score stage draws them again to know what a run should
    hold; the data already cut to `index_units`: (questions, the pool they were drawn from, labels).
    ValueError for settings that cannot be drawn."""
    pool, labels = filtered_pool(dataset, subset)
    extra = subset.get("extra")
    if extra is not None and not isinstance(extra, Mapping):
        raise ValueError(f"subset.extra must map strata to counts, e.g. 'subset.extra={{1:40}}', not {extra!r}")
    questions = stratified_subset(pool, subset.get("n"), dataset.strata_key, int(subset.get("seed") or 0),
                                  [str(i) for i in subset["ids"]] if subset.get("ids") else None,
                                  {str(k): int(v) for k, v in extra.items()} if extra else None)
    return questions, pool, labels
