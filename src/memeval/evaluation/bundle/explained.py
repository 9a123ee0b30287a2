"""Failed health checks a bundle's notes must give a reason for, and its health table.

A bundle is read as a result. A run that fails a health check may mean nothing, so the export
refuses a bundle whose hand-written notes leave a `fail` unexplained. A reason is a paragraph,
list item or table row of the notes (outside the generated block) that names both the run's
method and the check, e.g. "- gsw `kind_drops` fails: the values dropped are not times, ...".
The check itself stays as the run wrote it: the notes explain it, they never hide it.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..health.table import side_by_side
from ..runs.health_file import Health, read_health
from . import facts

_BLOCK = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*] |\d+\. |\|))")  # paragraphs, list items, table rows


def _passages(hand: str) -> list[str]:
    if facts.BEGIN in hand and facts.END in hand:
        head, rest = hand.split(facts.BEGIN, 1)
        hand = head + rest.split(facts.END, 1)[1]
    return [p.lower() for p in _BLOCK.split(hand) if p.strip()]


def _named(runs: list[Path]) -> list[tuple[str, str, Health]]:
    """(method, column name, health) of each checked run; the column is the method, or the run
    folder's name where two runs share a method."""
    out = []
    for run in runs:
        health = read_health(run)
        if health is None:
            continue
        out.append((facts.method_of(run), run.name, health))
    methods = [m for m, _, _ in out]
    return [(m, m if methods.count(m) == 1 else name, h) for m, name, h in out]


def unexplained(hand: str, runs: list[Path]) -> list[str]:
    """'method check' for each failed check no passage of the notes names with its method."""
    passages = _passages(hand)
    missing = []
    for method, _, health in _named(runs):
        word = re.compile(rf"(?<![\w-]){re.escape(method.lower())}(?![\w-])")
        for c in health.failed:
            if not any(c.name.lower() in p and word.search(p) for p in passages):
                missing.append(f"{method} {c.name}")
    return list(dict.fromkeys(missing))


def health_lines(runs: list[Path], missing: list[str]) -> list[str]:
    """The generated block's health table (one row per check, a column per run) and the failed
    checks the notes left without a reason (only when the export was told to allow them)."""
    named = _named(runs)
    if not named:
        return []
    out = ["", "### Health of every run (`memeval health --side-by-side`)", "",
           side_by_side([(col, h) for _, col, h in named]), ""]
    if missing:
        out.append("- **Failed checks the notes give no reason for** (exported with "
                   f"`--allow-unexplained-fails`): {', '.join(missing)}.")
    return out
