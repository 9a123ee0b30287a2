"""Bootstrap standard deviations (seeded; over questions, or over clusters such as LoCoMo's
conversations), paired bootstrap differences between two runs, Holm's correction across the
rows of a paired table, the minimum detectable difference at a run's n, and the overall of a
stratified subset weighted by each stratum's share of the population it was drawn from."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import NormalDist
from typing import Any

import numpy as np

Stat = Callable[[list[int]], float]


def _groups(clusters: Sequence[str]) -> list[np.ndarray]:
    """The indices of each cluster, clusters in order of first appearance."""
    order: dict[str, list[int]] = {}
    for i, c in enumerate(clusters):
        order.setdefault(str(c), []).append(i)
    return [np.array(v, dtype=int) for v in order.values()]


def _draw(rng: np.random.Generator, n: int, groups: list[np.ndarray] | None) -> np.ndarray:
    """One resample of n indices: n questions with replacement, or (clusters) as many clusters
    with replacement as there are, each bringing all its questions."""
    if groups is None:
        return rng.integers(0, n, size=n)
    return np.concatenate([groups[k] for k in rng.integers(0, len(groups), size=len(groups))])


def bootstrap_std(n: int, statistic: Stat, resamples: int = 1000, seed: int = 0,
                  clusters: Sequence[str] | None = None) -> float:
    """Std of `statistic(indices)` over `resamples` draws of n question indices with replacement;
    with `clusters` (one label per index) a cluster bootstrap: whole clusters are drawn, so
    questions that share a conversation move together. Fewer than 2 clusters: NaN (the spread
    between clusters cannot be estimated from one)."""
    if n == 0:
        return math.nan
    groups = _groups(clusters) if clusters is not None else None
    if groups is not None and len(groups) < 2:
        return math.nan
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        idx = _draw(rng, n, groups).tolist()
        v = statistic(idx)
        if not math.isnan(v):
            values.append(v)
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def nanmean(a: np.ndarray) -> float:
    """Mean over defined values (NaN marks "not applicable", e.g. no evidence to recall)."""
    ok = a[~np.isnan(a)]
    return float(ok.mean()) if ok.size else math.nan


def mean_at(values: np.ndarray, idx: Any) -> float:
    """`nanmean(values[idx])`: a resample's mean, as a named function (bootstrap_std's statistic)."""
    return nanmean(values[idx])


def paired_difference(a: dict[str, float], b: dict[str, float], resamples: int = 1000,
                      seed: int = 0, clusters: dict[str, str] | None = None) -> dict[str, float]:
    """Mean(a) - mean(b) over shared question ids, with one shared resample of ids per draw
    (of whole clusters when `clusters` maps each id to one: a cluster bootstrap)."""
    ids = sorted(set(a) & set(b))
    if not ids:
        raise ValueError("the two runs share no question ids")
    va = np.array([a[i] for i in ids], dtype=float)
    vb = np.array([b[i] for i in ids], dtype=float)
    diff = va - vb
    groups = _groups([clusters[i] for i in ids]) if clusters is not None else None
    if groups is not None and len(groups) < 2:
        raise ValueError("a cluster bootstrap needs 2+ clusters among the shared questions")
    rng = np.random.default_rng(seed)
    draws = np.array([diff[_draw(rng, len(ids), groups)].mean() for _ in range(resamples)])
    return {
        "n": len(ids),
        "mean_a": float(va.mean()),
        "mean_b": float(vb.mean()),
        "diff": float(diff.mean()),
        "diff_std": float(draws.std(ddof=1)),
        "ci95_low": float(np.percentile(draws, 2.5)),
        "ci95_high": float(np.percentile(draws, 97.5)),
        "p_two_sided": float(min(1.0, 2 * min((draws <= 0).mean(), (draws >= 0).mean()))),
    }


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the given order: the k-th smallest of m is
    multiplied by m - k + 1, made non-decreasing and capped at 1. NaN stays NaN, not counted in m."""
    ok = [i for i, p in enumerate(pvalues) if not math.isnan(p)]
    m = len(ok)
    out = [math.nan] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(sorted(ok, key=lambda i: pvalues[i])):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def min_detectable_difference(std: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest true difference a two-sided test at `alpha` detects with probability `power`,
    given the standard error of the difference at the run's n (normal approximation):
    (z_{1-alpha/2} + z_power) x std, i.e. 2.80 std at the defaults."""
    z = NormalDist().inv_cdf
    return (z(1 - alpha / 2) + z(power)) * std


def stratified_mean(values: Sequence[float], strata: Sequence[str], weights: dict[str, float],
                    resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """(sum over strata of weight x the stratum's mean, its stratified-bootstrap std): each draw
    resamples the questions within every stratum, as the subset was drawn. Weights are
    renormalised over the strata present in `strata`; a stratum with weight but no value is
    left out (the caller lists it)."""
    arr = np.array(values, dtype=float)
    groups = {s: np.array([i for i, t in enumerate(strata) if t == s], dtype=int) for s in dict.fromkeys(strata)}
    groups = {s: g for s, g in groups.items() if weights.get(s, 0) > 0}
    total = sum(weights[s] for s in groups)
    if not groups or total <= 0:
        return math.nan, math.nan
    w = {s: weights[s] / total for s in groups}
    value = float(sum(w[s] * arr[g].mean() for s, g in groups.items()))
    rng = np.random.default_rng(seed)
    draws = [sum(w[s] * arr[g[rng.integers(0, len(g), size=len(g))]].mean() for s, g in groups.items())
             for _ in range(resamples)]
    return value, float(np.std(draws, ddof=1)) if resamples > 1 else math.nan
