"""Paired differences of scored runs against a reference, as every paired table shows them.

One place for what the report's and compare's paired tables share: the resampling unit (the
reference's, from metrics.json `statistics`: a cluster bootstrap over LoCoMo conversations when
its intervals are), Holm's correction across the table's methods, and the minimum detectable
difference at the run's n printed under the table. A subset drawn stratified from a larger
population (EpBench's cue buckets) gets the population-weighted difference beside it: the
headline the paper reports is weighted, so its detectable difference is the one a reader needs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..stats import holm, min_detectable_difference, paired_difference, stratified_mean
from .blocks import MIN_PER_STRATUM, thin_strata
from .scored import Run

ALPHA, POWER = 0.05, 0.8


def paired_differences(runs: list[Run], reference: Run,
                       scores: Callable[[Run], dict[str, float]] = lambda r: r.headline_scores,
                       ) -> list[tuple[Run, dict[str, Any]]]:
    """(run, stats.paired_difference against the reference) for every run but the reference, in
    order, resampled as the reference's intervals are, with `p_holm` (Holm-corrected across
    these runs) and `mde` (the minimum detectable difference at 80% power, two-sided 0.05).
    `scores`: a run's per-question scores the table compares (default: those the headline counts)."""
    clusters = reference.clusters
    ref = scores(reference)
    block = reference.metrics.get("stratified") or {}
    strata = ({p["question_id"]: str(p.get(block["key"])) for p in reference.predictions}
              if block.get("weights") else None)  # a stratified subset: its difference is weighted too
    out: list[tuple[Run, dict[str, Any]]] = []
    for r in runs:
        if r.path.resolve() == reference.path.resolve():
            continue
        mine = scores(r)
        d: dict[str, Any] = paired_difference(mine, ref, clusters=clusters)
        d["mde"] = _mde(d["diff_std"])
        if strata is not None:
            d["weighted"] = _weighted(mine, ref, strata, block)
        out.append((r, d))
    for (_, d), p in zip(out, holm([d["p_two_sided"] for _, d in out]), strict=True):
        d["p_holm"] = p
    return out


def _weighted(a: dict[str, float], b: dict[str, float], strata: dict[str, str],
              block: dict[str, Any]) -> dict[str, Any]:
    """The paired difference weighted by population share (the reference's metrics.json
    `stratified` weights), resampled within each stratum as the subset was drawn."""
    ids = sorted(set(a) & set(b) & set(strata))
    labels = [strata[i] for i in ids]
    thin = thin_strata({s: labels.count(s) for s in dict.fromkeys(labels)})
    # too few questions in a stratum to resample: the value alone (one draw), no std, no MDE
    value, std = stratified_mean([a[i] - b[i] for i in ids], labels, block["weights"], **({"resamples": 1} if thin else {}))
    if thin:
        return {"key": block["key"], "diff": value, "diff_std": math.nan, "mde": math.nan, "thin": len(thin)}
    return {"key": block["key"], "diff": value, "diff_std": std, "mde": _mde(std)}


def _mde(std: float) -> float:
    """The minimum detectable difference from the difference's bootstrap std; NaN when that std
    is 0: every question differs by the same amount (two runs that score every question alike),
    so the data hold no variance to size a test with, and "MDE 0.000" would read as a test that
    detects any difference."""
    return math.nan if std == 0 else min_detectable_difference(std, ALPHA, POWER)


def _mde_text(mde: float) -> str:
    return f"{mde:.3f}" if not math.isnan(mde) else "– (not estimated: every question differs by the same amount)"


def paired_notes(pairs: list[tuple[Run, dict[str, Any]]], reference: Run) -> list[str]:
    """The lines under a paired table: what was resampled, Holm, the minimum detectable difference."""
    st = reference.metrics.get("statistics") or {}
    unit = st.get("resampling_unit", "question")
    resampled = ("question ids" if reference.clusters is None else
                 f"whole {unit}s (a cluster bootstrap over {st.get('n_units', '?')} {unit}s)")
    lines = [f"Resampled: {resampled}, 1000 seeded draws shared by both runs."
             + (f" Note: {st['note']}." if st.get("note") else "")]
    if pairs:
        lines.append(f"p (Holm) = p corrected by Holm's step-down method across the {len(pairs)} "
                     "method(s) of this table.")
        ns = sorted({d["n"] for _, d in pairs})
        lines.append(f"Minimum detectable difference at n = {'/'.join(map(str, ns))} (80% power, two-sided "
                     f"alpha {ALPHA}, 2.80 x the difference's std): "
                     + ", ".join(f"{r.label or r.method} {_mde_text(d['mde'])}" for r, d in pairs) + ".")
        weighted = [(r, d["weighted"]) for r, d in pairs if "weighted" in d]
        thin = [(r, w) for r, w in weighted if w.get("thin")]
        if thin:
            lines.append(f"Weighted by population share ({thin[0][1]['key']}): differences "
                         + ", ".join(f"{r.label or r.method} {w['diff']:+.3f}" for r, w in thin)
                         + f"; no std or detectable difference: a stratum holds fewer than {MIN_PER_STRATUM} "
                         "questions, too few to resample.")
        weighted = [(r, w) for r, w in weighted if not w.get("thin")]
        if weighted:
            lines.append(f"Weighted by population share ({weighted[0][1]['key']}; the headline the papers "
                         "weight), difference ± std and minimum detectable difference: "
                         + ", ".join(f"{r.label or r.method} {w['diff']:+.3f} ± {w['diff_std']:.3f} "
                                     f"(MDE {_mde_text(w['mde'])})" for r, w in weighted) + ".")
    return lines
