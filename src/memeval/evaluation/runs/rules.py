"""Paired differences under each scoring rule a protocol scores side by side (EpBench's lenient
and harsh), and the sentences that say where a conclusion depends on the rule.

Lenient caps a method's claimed items at the gold count, so a method that lists everything loses
nothing for its extra items; harsh divides by every claimed item (the GSW paper's Table 2). The
two rules can order methods differently, so every paired table is computed under both, and a
difference whose sign or star changes between them is named: such a difference is a finding about
the rule, not about the method.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from .paired import paired_differences
from .scored import Run

Starred = Callable[[Run, Run], bool]  # whether a run's difference from the reference may carry a star


def rules_of(reference: Run) -> tuple[str, ...]:
    """The rules the reference's protocol scores side by side (empty: one rule only)."""
    return tuple(getattr(reference.protocol, "side_by_side_policies", ()) or ())


def rule_scores(run: Run, policy: str) -> dict[str, float]:
    """A run's per-question headline scores under `policy` (its own judgments, no model call)."""
    return run.protocol.headline_scores(run.judgments, run.predictions, policy)


@dataclass(frozen=True)
class RuleDifference:
    """One run's paired difference from the reference under one rule."""

    rule: str
    diff: float
    low: float
    high: float
    n: int
    significant: bool  # the 95% interval excludes 0
    starred: bool  # significant, and neither run failed a health check (or the reader allowed it)
    weighted: float | None = None  # the population-weighted difference (a stratified subset), else None

    @property
    def sign(self) -> int:
        return (self.diff > 0) - (self.diff < 0)


def by_rule(runs: list[Run], reference: Run, starred: Starred) -> dict[str, dict[str, RuleDifference]]:
    """{run label: {rule: its difference}} for every run but the reference, under every rule."""
    out: dict[str, dict[str, RuleDifference]] = {}
    for rule in rules_of(reference):
        for r, d in paired_differences(runs, reference, scores=partial(rule_scores, policy=rule)):
            significant = d["ci95_low"] > 0 or d["ci95_high"] < 0
            out.setdefault(r.label, {})[rule] = RuleDifference(
                rule, d["diff"], d["ci95_low"], d["ci95_high"], d["n"], significant,
                significant and starred(r, reference), (d.get("weighted") or {}).get("diff"))
    return out


def changes(diffs: dict[str, RuleDifference]) -> str:
    """What changes between the rules for one run: '' when neither the sign nor whether the
    interval excludes 0 (the star, where health allows one) does."""
    rules = list(diffs)
    parts = []
    if len({diffs[r].sign for r in rules}) > 1:
        parts.append("sign changes (" + ", ".join(f"{r} {diffs[r].diff:+.3f}" for r in rules) + ")")
    if len({diffs[r].significant for r in rules}) > 1:
        only = " and ".join(r for r in rules if diffs[r].significant)
        withheld = not any(diffs[r].starred for r in rules)
        parts.append(f"the interval excludes 0 under {only} only"
                     + (" (not starred: a run failed a health check)" if withheld else ""))
    return "; ".join(parts)


def rule_rows(table: dict[str, dict[str, RuleDifference]]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the side-by-side paired table."""
    rules = list(dict.fromkeys(rule for diffs in table.values() for rule in diffs))
    head = ["method", "n", *(f"{rule}: difference [95% interval]" for rule in rules), "changes between rules"]
    rows = []
    for label, diffs in table.items():
        cells = [f"{d.diff:+.3f} [{d.low:+.3f}, {d.high:+.3f}]{' *' if d.starred else ''}"
                 + (f"; weighted {d.weighted:+.3f}" if d.weighted is not None else "")
                 for d in (diffs[rule] for rule in rules)]
        rows.append([label, str(next(iter(diffs.values())).n), *cells, changes(diffs) or "none"])
    return head, rows


def rule_sentences(table: dict[str, dict[str, RuleDifference]], reference: str) -> list[str]:
    """One sentence per run whose conclusion depends on the rule; one saying none does otherwise."""
    moved = [(label, text) for label, diffs in table.items() if (text := changes(diffs))]
    if not moved:
        return [f"No difference from {reference} changes sign or star between the rules."]
    return [f"{label} vs {reference}: {text}: the conclusion depends on the scoring rule." for label, text in moved]


def rule_summary(runs: list[Run], reference: Run, starred: Starred) -> dict[str, Any] | None:
    """The side-by-side table's parts (None when the protocol has one rule): header, rows, sentences."""
    if len(rules_of(reference)) < 2:
        return None
    table = by_rule(runs, reference, starred)
    head, rows = rule_rows(table)
    health = {r.label: r.health_cell.replace("|", "/") for r in runs}
    return {"header": [*head, "health"], "rows": [[*row, health.get(row[0], "not checked")] for row in rows],
            "sentences": rule_sentences(table, reference.label)}
