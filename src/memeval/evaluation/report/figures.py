"""The report's figures (matplotlib, Agg): headline by group, context tokens vs score, cost.

Every figure names the answering model, the judge, the credit and n under its title, so a figure
copied out of the report still says what it shows. Method names live in a legend beside the
plot, never as labels on the points, so they cannot overlap; a figure with nothing to show (every
cost 0 and no token to price) is not drawn at all. A run whose health failed is drawn hollow or
hatched and its legend entry says so: a figure copied out of the report must not show a broken
run's score as a result.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..presentation import Presentation  # noqa: E402
from ..runs.scored import Run  # noqa: E402
from .prices import Reference, api_equivalent  # noqa: E402
from .tables import WEIGHTED, WEIGHTED_NOTE, group_name, overall_axis, overall_columns  # noqa: E402

MARKERS = "osD^vP*Xh<>p"


def _legend_label(r: Run) -> str:
    """The method's legend entry, with its health when a check failed or warned."""
    status = None if r.health is None else r.health.status
    return r.label if status in (None, "ok") else f"{r.label} (health: {status})"


def _save(fig: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")  # the legend beside the axes stays in the image
    plt.close(fig)
    return path


def setup_line(runs: list[Run], p: Presentation) -> str:
    """answering model, judge, credit and n: what every figure states under its title."""
    def one(key: str) -> str:
        return " | ".join(dict.fromkeys(r.provenance()[key] for r in runs))

    ns = sorted({int(r.metrics[p.overall].get("n", len(r.predictions))) for r in runs})
    n = str(ns[0]) if len(ns) == 1 else f"{ns[0]}-{ns[-1]}"
    return (f"answering model: {one('answer_model')}; judge: {one('judge_model')}; credit: {one('credit')}; "
            f"n = {n} questions per method ({p.overall})")


def _titled(ax: plt.Axes, title: str, runs: list[Run], p: Presentation, width: float) -> None:
    wrap = max(40, int(width * 11))  # characters of a 9-point line across the axes
    ax.set_title(title + "\n" + "\n".join(textwrap.wrap(setup_line(runs, p), wrap)), fontsize=9, loc="left")


def _groups(runs: list[Run], p: Presentation) -> list[str]:
    """The groups any run has, in the declared order first (EpBench's cue buckets)."""
    seen = p.ordered([g for r in runs for g in p.group_metrics(r.metrics)])
    return [g for g in seen if any(g in p.group_metrics(r.metrics) for r in runs)]


def _subset_runs(runs: list[Run]) -> tuple[bool, bool]:
    """(any, every) run is a stratified subset with a population-weighted overall."""
    weighted = [r.weighted_overall is not None for r in runs]
    return any(weighted), all(weighted)


def _cell(r: Run, p: Presentation, g: str) -> dict | None:
    if g == WEIGHTED:
        return r.weighted_overall
    return r.shown_metrics[p.overall] if g == "overall" else p.group_metrics(r.shown_metrics).get(g)


def by_group(runs: list[Run], p: Presentation, path: Path) -> Path:
    """Grouped bars: one group per bucket/category (by name), one bar per method, error bar =
    bootstrap std; a group whose cell is not the headline carries its caveat; the overall, and
    a stratified subset's weighted overall beside it, come last."""
    metric, name, what = p.metric, p.label, p.group_label
    weighted, _ = _subset_runs(runs)
    overall = overall_columns(weighted)
    groups = [*_groups(runs, p), *overall]
    caveats = {k: v for r in runs for k, v in r.caveats.items()}
    ticks = [overall[g] + (f" ({caveats[g]})" if g in caveats else "") if g in overall
             else group_name(p, runs[0].metrics, g, caveats) for g in groups]
    x = np.arange(len(groups))
    width = 0.8 / max(len(runs), 1)
    fig_w = max(7.0, 1.2 * len(groups) + 0.3 * len(runs))
    fig, ax = plt.subplots(figsize=(fig_w, 4.6))
    for i, r in enumerate(runs):
        cells = [_cell(r, p, g) for g in groups]
        vals = [(c or {}).get(metric) for c in cells]
        errs = [(c or {}).get(f"{metric}_std") for c in cells]
        failed_style: dict[str, Any] = {"hatch": "//", "alpha": 0.45} if r.failed else {}
        ax.bar(x + (i - (len(runs) - 1) / 2) * width, [v if v is not None else np.nan for v in vals], width,
               yerr=[e if e is not None else 0 for e in errs], capsize=2, label=_legend_label(r),
               **failed_style)
    ax.set_xticks(x, ["\n".join(textwrap.wrap(t, 14)) for t in ticks], fontsize=8)
    ax.set_xlabel(what + (f"\n{WEIGHTED_NOTE.format(what=what)}" if weighted else ""))
    ax.set_ylabel(f"{name} (± bootstrap std)")
    ax.set_ylim(0, 1.05)
    _titled(ax, f"{name} by {what}, one bar per method", runs, p, fig_w)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="method")
    return _save(fig, path)


def frontier(runs: list[Run], p: Presentation, path: Path) -> Path:
    """Mean context tokens per question vs the headline score: the efficiency frontier. Each
    method is a marker of its own, named in the legend (labels on the points overlapped). The
    score is the population-weighted overall when every run is a stratified subset."""
    metric, name = p.metric, p.label
    _, weighted = _subset_runs(runs)
    fig, ax = plt.subplots(figsize=(7, 4.6))
    for i, r in enumerate(runs):
        cell = _cell(r, p, WEIGHTED if weighted else "overall") or {}
        x, y = r.mean_context_tokens, cell.get(metric)
        if x is None or y is None:
            continue
        hollow: dict[str, Any] = {"markerfacecolor": "none"} if r.failed else {}
        ax.errorbar([x], [y], yerr=[cell.get(f"{metric}_std") or 0], fmt=MARKERS[i % len(MARKERS)],
                    capsize=3, markersize=7, label=_legend_label(r), **hollow)
    xs = [r.mean_context_tokens for r in runs if r.mean_context_tokens]
    log = bool(xs) and max(xs) / min(xs) > 20 and all(r.mean_context_tokens for r in runs)
    if log:
        ax.set_xscale("log")
    ax.set_xlabel("mean context tokens per question" + (" (log)" if log else ""))
    ax.set_ylabel(f"{overall_axis(name, weighted)} (± bootstrap std)")
    _titled(ax, f"Context tokens vs {name}", runs, p, 7)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="method")
    return _save(fig, path)


def cost(runs: list[Run], p: Presentation, path: Path, ref: Reference) -> Path | None:
    """Cost per method: USD paid (fresh and cached) where any was paid; else, for local runs,
    what the tokens would cost at the reference API prices, by stage; None (no figure) when
    there is nothing to show either way."""
    labels = [r.label for r in runs]
    fresh = [r.cost("fresh") for r in runs]
    cached = [r.cost("cached") for r in runs]
    fig_w = max(7.0, 0.9 * len(runs) + 3)
    if any(fresh) or any(cached):
        fig, ax = plt.subplots(figsize=(fig_w, 4.6))
        ax.bar(labels, fresh, label="fresh (paid by this run)")
        ax.bar(labels, cached, bottom=fresh, label="cached (paid earlier)")
        ax.set_ylabel("cost USD")
        title = "Cost per method, USD paid"
    else:
        eq = [api_equivalent(r, ref)["stages"] for r in runs]
        parts = {"index": ("index",), "retrieve + answer": ("retrieve", "answer"), "judge": ("judge",)}
        stacks = {k: [sum(e.get(s, 0.0) for s in stages) for e in eq] for k, stages in parts.items()}
        other = [sum(v for s, v in e.items() if s not in {"index", "retrieve", "answer", "judge"}) for e in eq]
        if any(other):
            stacks["other"] = other
        if not any(v for vals in stacks.values() for v in vals):
            return None
        fig, ax = plt.subplots(figsize=(fig_w, 4.6))
        bottom = np.zeros(len(runs))
        for k, vals in stacks.items():
            ax.bar(labels, vals, bottom=bottom, label=k)
            bottom += np.array(vals)
        ax.set_ylabel("API-equivalent USD")
        gaps = [r.label for r in runs if r.index_usage.unrecorded]
        if gaps:  # their index bar is this run's own index calls (0 where it reused a stored index)
            ax.set_xlabel("\n".join(textwrap.wrap("index build not recorded (this run's index calls only): "
                                                   + ", ".join(gaps), int(fig_w * 12))), fontsize=8)
        title = (f"API-equivalent cost per method: every token at {ref.chat} / {ref.embedder} prices "
                 f"({ref.version}); the runs paid 0 USD")
    ax.tick_params(axis="x", rotation=30)
    for t in ax.get_xticklabels():
        t.set_horizontalalignment("right")
    _titled(ax, "\n".join(textwrap.wrap(title, int(fig_w * 11))), runs, p, fig_w)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, path)
