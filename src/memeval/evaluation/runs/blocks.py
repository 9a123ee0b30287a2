"""The score stage's statistics blocks of metrics.json, and the lines results.md shows for them.

- `statistics`: what the bootstrap resampled (questions, or LoCoMo's conversations when the run
  holds 2+), with the protocol's note where an interval cannot show the real uncertainty;
- `gold_audit` (datasets with a published audit of their gold): the headline on all questions
  and on the questions no audit flags, both n;
- `stratified` (a run on a subset of its population): the overall weighted by each stratum's
  share of the population it was drawn from, beside the unweighted mean.

They read the judgments and predictions through the protocol and the facts the run recorded
in meta.json (datasets/facts.py), so they are pure functions of a run folder: the upgrade
module computes them with these same functions for a run scored before they existed.
"""

from __future__ import annotations

import math
from typing import Any

from ..protocol import Protocol, Resampling, fmt
from ..stats import stratified_mean

BLOCKS = ("statistics", "by_policy", "gold_audit", "stratified", "repeats")
RESAMPLES, SEED = 1000, 0  # the weighted overall's stratified bootstrap


def statistics_block(res: Resampling) -> dict[str, Any]:
    out: dict[str, Any] = {"resampling_unit": res.unit, "n_units": res.n_units}
    if res.note:
        out["note"] = res.note
    return out


def _mean(scores: dict[str, float]) -> float:
    values = list(scores.values())
    return sum(values) / len(values) if values else math.nan


def gold_audit_block(scores: dict[str, float], fact: dict[str, Any], metric: str) -> dict[str, Any]:
    """The headline (mean of `scores`, the per-question headline) on all questions and on those
    the audit does not flag."""
    out: dict[str, Any] = {"source": fact["source"], "rule": fact["rule"], "available": bool(fact["available"])}
    if not fact["available"]:
        out["note"] = f"{fact['source']} is not in the data folder: no split (python scripts/fetch_data.py)"
        return out
    flagged = sorted(q for q in scores if q in fact["flagged"])
    kept = {q: v for q, v in scores.items() if q not in fact["flagged"]}
    return {**out, "metric": metric, "all": {"n": len(scores), metric: _mean(scores)},
            "unflagged": {"n": len(kept), metric: _mean(kept)}, "flagged_ids": flagged}


# A stratum of fewer questions than this gives the within-stratum bootstrap too few values to
# vary: LongMemEval's 12-question bundle holds 2 of each type, and where both score alike the
# stratified std is 0.000 while the unweighted one is 0.15
MIN_PER_STRATUM = 5


def thin_strata(sample: dict[str, int]) -> list[str]:
    """The strata (of a block's `sample`: questions per stratum) too small for a stratified std."""
    return [s for s, n in sample.items() if n < MIN_PER_STRATUM]


def weighted_std_text(block: dict[str, Any]) -> str:
    """The weighted overall's std as the tables print it: '–' with the reason where a stratum is thin."""
    thin = thin_strata(block.get("sample") or {})
    if thin:
        return (f"– (not estimated: {len(thin)} of {len(block['sample'])} strata hold fewer than "
                f"{MIN_PER_STRATUM} questions)")
    return fmt(block["weighted_std"])


def stratified_block(scores: dict[str, float], strata: dict[str, str], population: dict[str, Any],
                     metric: str) -> dict[str, Any]:
    """The headline weighted by each stratum's share of the population (renormalised over the
    strata the run scored), its stratified-bootstrap std, and the unweighted mean beside it."""
    ids = list(scores)
    labels = [strata[q] for q in ids]
    counts = population["counts"]
    present = [s for s in counts if s in set(labels)]
    total = sum(counts[s] for s in present)
    weights = {s: counts[s] / total for s in present} if total else {}
    value, std = stratified_mean([scores[q] for q in ids], labels, weights, RESAMPLES, SEED)
    return {"key": population["key"], "metric": metric, "population_n": population["n"],
            "population": dict(counts), "sample": {s: labels.count(s) for s in counts if s in set(labels)},
            "weights": weights, "weighted": value, "weighted_std": std,
            "unweighted": _mean(scores), "n": len(ids),
            "missing_strata": [s for s in counts if s not in set(labels)],
            "unknown_strata": sorted(set(labels) - set(counts))}


def score_blocks(protocol: Protocol, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]],
                 facts: dict[str, Any], policy: str | None = None,
                 resampling: Resampling | None = None) -> dict[str, Any]:
    """The blocks for one run (in BLOCKS order; gold_audit and stratified only where they apply).
    `resampling`: what the saved numbers used, when not what the protocol uses today."""
    out: dict[str, Any] = {"statistics": statistics_block(resampling or protocol.resampling(predictions))}
    if (rules := protocol.policy_overalls(judgments, predictions)) is not None:
        out["by_policy"] = rules  # the same judgments under every rule the protocol scores side by side
    audit, population, repeats = facts.get("gold_audit"), facts.get("population"), facts.get("repeats")
    ids = {p["question_id"] for p in predictions}
    subset = population is not None and len(ids) < population["n"]
    if audit is None and not subset and not repeats:
        return out
    metric = protocol.presentation().metric
    try:
        scores = protocol.headline_scores(judgments, predictions, policy)
    except NotImplementedError as exc:  # another policy this protocol cannot score per question
        note = {"note": str(exc)}
        return {**out, **({"gold_audit": note} if audit is not None else {}), **({"stratified": note} if subset else {}),
                **({"repeats": note} if repeats else {})}
    if audit is not None:
        out["gold_audit"] = gold_audit_block(scores, audit, metric)
    if subset and population is not None:
        key = population["key"]
        strata = {p["question_id"]: str(p.get(key)) for p in predictions}
        out["stratified"] = stratified_block(scores, strata, population, metric)
    if repeats:
        out["repeats"] = repeats_block(scores, repeats, metric)
    return out


def repeats_block(scores: dict[str, float], repeats: dict[str, str], metric: str) -> dict[str, Any]:
    """The headline on all its questions and without those that repeat an earlier one (same
    text and evidence: datasets.facts.repeated_questions), both n."""
    kept = {q: v for q, v in scores.items() if q not in repeats}
    return {"metric": metric, "all": {"n": len(scores), metric: _mean(scores)},
            "without_repeats": {"n": len(kept), metric: _mean(kept)}, "repeats": dict(sorted(repeats.items()))}


def section(metrics: dict[str, Any], label: str) -> str:
    """results.md lines for the blocks ("" when none says anything): the resampling unit's note,
    the gold-audit split, the weighted overall."""
    lines = []
    st = metrics.get("statistics") or {}
    if st.get("note"):
        lines.append(f"Resampling unit: {st['resampling_unit']} ({st['n_units']}); {st['note']}.")
    elif st.get("resampling_unit", "question") != "question":
        lines.append(f"± = cluster bootstrap over {st['n_units']} {st['resampling_unit']}s "
                     "(questions of one cluster are drawn together).")
    lines += [x for x in (audit_line(metrics.get("gold_audit"), label),
                          weighted_line(metrics.get("stratified"), label),
                          repeats_line(metrics.get("repeats"), label)) if x]
    return "\n" + "\n".join(lines) + "\n" if lines else ""


def audit_line(block: dict[str, Any] | None, label: str) -> str | None:
    if not block:
        return None
    if "all" not in block:
        return f"Gold audit: {block.get('note', 'no split')}."
    m, a, u = block["metric"], block["all"], block["unflagged"]
    return (f"Gold audit ({block['source']}): {label} {fmt(a[m])} on all {a['n']} questions, "
            f"{fmt(u[m])} on the {u['n']} no audit flags ({a['n'] - u['n']} flagged: {block['rule']}).")


def weighted_line(block: dict[str, Any] | None, label: str) -> str | None:
    if not block:
        return None
    if "weighted" not in block:
        return f"Weighted overall: {block.get('note', 'not computed')}."
    shares = ", ".join(f"{s} {w:.2f}" for s, w in block["weights"].items())
    missing = f"; no scored question in {block['missing_strata']}" if block["missing_strata"] else ""
    return (f"Overall {label} weighted by population share: {fmt(block['weighted'])} ± "
            f"{weighted_std_text(block)} (unweighted mean of the {block['n']} questions: "
            f"{fmt(block['unweighted'])}); weights by {block['key']} from {block['population_n']} "
            f"questions: {shares}{missing}.")


def repeats_line(block: dict[str, Any] | None, label: str) -> str | None:
    if not block:
        return None
    if "all" not in block:
        return f"Repeated questions: {block.get('note', 'not computed')}."
    m, a, w = block["metric"], block["all"], block["without_repeats"]
    pairs = ", ".join(f"{q} repeats {first}" for q, first in block["repeats"].items())
    return (f"Repeated questions (the same text and evidence as an earlier question: {pairs}): {label} "
            f"{fmt(a[m])} on all {a['n']} questions the headline counts, {fmt(w[m])} on the {w['n']} left "
            f"without the {a['n'] - w['n']} repeat(s) among them.")
