"""Turning a measured value into a Check: thresholds, status, and how values are shown.

A check with no value measured nothing: its status is "not_measured", never "ok" (a reader must
not take an unmeasured judge or context for a healthy one)."""

from __future__ import annotations

from typing import Any

from ..runs.health_file import NOT_MEASURED, Check


def above(value: float | None, limits: dict[str, Any]) -> str:
    """Status of a value that is bad when high: fail past `fail`, warn past `warn`."""
    if value is None:
        return NOT_MEASURED
    if "fail" in limits and value > limits["fail"]:
        return "fail"
    if "warn" in limits and value > limits["warn"]:
        return "warn"
    return "ok"


def below(value: float | None, limits: dict[str, Any]) -> str:
    """Status of a value that is bad when low: fail under `fail`, warn under `warn`."""
    if value is None:
        return NOT_MEASURED
    if "fail" in limits and value < limits["fail"]:
        return "fail"
    if "warn" in limits and value < limits["warn"]:
        return "warn"
    return "ok"


def share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def limits_of(limits: dict[str, Any]) -> dict[str, Any]:
    """The threshold as health.json records it: the warn and fail values only."""
    return {k: limits[k] for k in ("warn", "fail") if k in limits}


def check(name: str, scope: str, value: Any, limits: dict[str, Any], message: str, low_is_bad: bool = False,
          status: str | None = None, questions: dict[str, str] | None = None) -> Check:
    if status is None:
        status = (below if low_is_bad else above)(value, limits)
    return Check(name, scope, status, value, limits_of(limits), message, dict(questions or {}))


def not_measured(name: str, scope: str, limits: dict[str, Any], why: str) -> Check:
    return Check(name, scope, NOT_MEASURED, None, limits_of(limits), why)


def pct(part: int, whole: int) -> str:
    return f"{part} of {whole}" + (f" ({100 * part / whole:.0f}%)" if whole else "")
