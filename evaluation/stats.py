"""Bootstrap standard deviations (seeded) and paired bootstrap differences between two runs."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

Stat = Callable[[list[int]], float]


def bootstrap_std(n: int, statistic: Stat, resamples: int = 1000, seed: int = 0) -> float:
    """Std of `statistic(indices)` over `resamples` draws of n question indices with replacement."""
    if n == 0:
        return math.nan
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        idx = rng.integers(0, n, size=n).tolist()
        v = statistic(idx)
        if not math.isnan(v):
            values.append(v)
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def nanmean(a: np.ndarray) -> float:
    """Mean over defined values (NaN marks "not applicable", e.g. no evidence to recall)."""
    ok = a[~np.isnan(a)]
    return float(ok.mean()) if ok.size else math.nan


def paired_difference(a: dict[str, float], b: dict[str, float], resamples: int = 1000,
                      seed: int = 0) -> dict[str, float]:
    """Mean(a) - mean(b) over shared question ids, with one shared resample of ids per draw."""
    ids = sorted(set(a) & set(b))
    if not ids:
        raise ValueError("the two runs share no question ids")
    va = np.array([a[i] for i in ids], dtype=float)
    vb = np.array([b[i] for i in ids], dtype=float)
    diff = va - vb
    rng = np.random.default_rng(seed)
    draws = np.array([diff[rng.integers(0, len(ids), size=len(ids))].mean() for _ in range(resamples)])
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
