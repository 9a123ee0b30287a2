"""The report's figures (matplotlib, Agg): headline by group, context tokens vs score, cost."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..presentation import Presentation  # noqa: E402
from ..runs.scored import Run  # noqa: E402


def _save(fig: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _groups(runs: list[Run], p: Presentation) -> list[str]:
    """The groups any run has, in the declared order first (EpBench's cue buckets)."""
    seen = p.ordered([g for r in runs for g in p.group_metrics(r.metrics)])
    return [g for g in seen if any(g in p.group_metrics(r.metrics) for r in runs)]


def by_group(runs: list[Run], p: Presentation, path: Path) -> Path:
    """Grouped bars: one group per bucket/category, one bar per method, error bar = bootstrap std."""
    metric, name, what = p.metric, p.label, p.group_label
    groups = [*_groups(runs, p), "overall"]
    x = np.arange(len(groups))
    width = 0.8 / max(len(runs), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(groups) + 0.4 * len(runs)), 4))
    for i, r in enumerate(runs):
        cells = [r.metrics[p.overall] if g == "overall" else p.group_metrics(r.metrics).get(g) for g in groups]
        vals = [(c or {}).get(metric) for c in cells]
        errs = [(c or {}).get(f"{metric}_std") for c in cells]
        ax.bar(x + (i - (len(runs) - 1) / 2) * width, [v if v is not None else np.nan for v in vals], width,
               yerr=[e if e is not None else 0 for e in errs], capsize=3, label=r.label)
    scale = bool(p.group_order)  # groups on a scale (cue counts) read unrotated; names are tilted
    ax.set_xticks(x, groups, rotation=0 if scale else 20, ha="center" if scale else "right")
    ax.set_xlabel(what)
    ax.set_ylabel(f"{name} (± bootstrap std)")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"{name} by {what}, one bar per method")
    ax.legend(fontsize=8)
    return _save(fig, path)


def frontier(runs: list[Run], p: Presentation, path: Path) -> Path:
    """Mean context tokens per question vs the headline score: the efficiency frontier."""
    metric, name = p.metric, p.label
    fig, ax = plt.subplots(figsize=(6, 4))
    for r in runs:
        x, y = r.mean_context_tokens, r.metrics[p.overall].get(metric)
        if x is None or y is None:
            continue
        ax.errorbar([x], [y], yerr=[r.metrics[p.overall].get(f"{metric}_std") or 0], fmt="o", capsize=3)
        ax.annotate(r.label, (x, y), textcoords="offset points", xytext=(5, 5), fontsize=8)
    xs = [r.mean_context_tokens for r in runs if r.mean_context_tokens]
    log = bool(xs) and max(xs) / min(xs) > 20 and all(r.mean_context_tokens for r in runs)
    if log:
        ax.set_xscale("log")
    ax.set_xlabel("mean context tokens per question" + (" (log)" if log else ""))
    ax.set_ylabel(f"overall {name}")
    ax.set_title(f"Context tokens vs {name}")
    return _save(fig, path)


def cost(runs: list[Run], path: Path) -> Path:
    """Cost per method, stacked fresh (paid by this run) and cached (paid before)."""
    labels = [r.label for r in runs]
    fresh = [r.cost("fresh") for r in runs]
    cached = [r.cost("cached") for r in runs]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(runs) + 2), 4))
    ax.bar(labels, fresh, label="fresh")
    ax.bar(labels, cached, bottom=fresh, label="cached (paid earlier)")
    ax.set_ylabel("cost USD")
    ax.set_title("Cost per method" + ("" if any(fresh) or any(cached) else " (all models unpriced: 0 USD)"))
    ax.tick_params(axis="x", rotation=20)
    ax.legend(fontsize=8)
    return _save(fig, path)
