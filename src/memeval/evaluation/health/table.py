"""The tables `memeval health` prints: one row per run and check (run, scope, check, status,
value, threshold, message), or with --side-by-side one row per check and one column per run. A
check with nothing to measure shows "not measured", neither ok nor failed."""

from __future__ import annotations

from typing import Any

from ..runs.health_file import Health, shown

HEADER = ("run", "scope", "check", "status", "value", "threshold", "message")
SCOPES = ("index", "context", "answer", "judge")


def _value(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def _threshold(t: Any) -> str:
    if not t:
        return "-"
    return " ".join(f"{k} {_value(v)}" for k, v in t.items()) if isinstance(t, dict) else str(t)


def rows(name: str, health: Health) -> list[tuple[str, ...]]:
    return [(name, c.scope, c.name, shown(c.status), _value(c.value), _threshold(c.threshold), c.message)
            for c in health.checks]


def markdown(table: list[tuple[str, ...]]) -> str:
    """A Markdown table (pipes in messages escaped), one row per check."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|").replace("\n", " ") for cell in row) + " |" for row in table]
    return "\n".join(lines)


def side_by_side(named: list[tuple[str, Health]]) -> str:
    """One row per check (scope, name, the thresholds), one column per run: status and value,
    "-" where a run has no such check. Checks go by scope (index, context, answer, judge), in the
    order the runs first name them within it; the messages stay in the long table."""
    order: dict[tuple[str, str], Any] = {}
    cells: dict[tuple[str, str], dict[int, str]] = {}
    for col, (_, health) in enumerate(named):
        for c in health.checks:
            key = (c.scope, c.name)
            order.setdefault(key, c.threshold)
            value = _value(c.value)
            cells.setdefault(key, {})[col] = shown(c.status) + ("" if value == "-" else f" {value}")
    head = ("scope", "check", "threshold", *(name for name, _ in named))
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, threshold in sorted(order.items(), key=lambda kv: SCOPES.index(kv[0][0]) if kv[0][0] in SCOPES
                                 else len(SCOPES)):
        lines.append("| " + " | ".join((*key, _threshold(threshold), *(cells[key].get(i, "-") for i in range(len(named))))) + " |")
    return "\n".join(lines)
