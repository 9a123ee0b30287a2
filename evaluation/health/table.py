"""The one table `memeval health` prints: run, scope, check, status, value, threshold, message."""

from __future__ import annotations

from typing import Any

from ..runs.health_file import Health

HEADER = ("run", "scope", "check", "status", "value", "threshold", "message")


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
    return [(name, c.scope, c.name, c.status, _value(c.value), _threshold(c.threshold), c.message)
            for c in health.checks]


def markdown(table: list[tuple[str, ...]]) -> str:
    """A Markdown table (pipes in messages escaped), one row per check."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|").replace("\n", " ") for cell in row) + " |" for row in table]
    return "\n".join(lines)
