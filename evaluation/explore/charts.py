"""The overview's charts as Vega-Lite specs, built with altair (the spec is checked against the
Vega-Lite schema when it is made) and drawn in the page by the bundled vega-embed.

Each chart's subtitle names what a number means there: answering model, judge, credit and n.
Every selection is named, so two builds of the same runs write the same spec byte for byte.
"""

from __future__ import annotations

from typing import Any

import altair as alt

WIDTH = 470
Z95 = 1.96


def _pick() -> Any:
    """Click a method in the legend to bring it forward (the others fade)."""
    return alt.selection_point(name="method_pick", fields=["method"], bind="legend")


def subtitle(setup: dict[str, str], ns: list[int]) -> list[str]:
    n = (f"n = {ns[0]}" if len(set(ns)) == 1 else f"n = {min(ns)}-{max(ns)}") if ns else "n = –"
    n += " per method (the headline's questions; each bar's own n in its tooltip)"
    return [f"answering model {setup['answer_model']} · judge {setup['judge_model']}",
            f"{setup['credit']} credit · {n}"]


def interval(cell: dict[str, Any], metric: str) -> tuple[float | None, float | None, str]:
    """The cell's interval: a saved `<metric>_ci` pair, else ±1.96 bootstrap std (clipped to 0-1)."""
    v = cell.get(metric)
    ci = cell.get(f"{metric}_ci")
    if isinstance(ci, list | tuple) and len(ci) == 2 and all(isinstance(x, int | float) for x in ci):
        return float(ci[0]), float(ci[1]), "saved 95% interval"
    std = cell.get(f"{metric}_std")
    if not isinstance(v, int | float) or not isinstance(std, int | float):
        return None, None, ""
    return max(0.0, v - Z95 * std), min(1.0, v + Z95 * std), "±1.96 bootstrap std"


def _color(order: list[str]) -> alt.Color:
    return alt.Color("method:N", sort=order, title="method", legend=alt.Legend(orient="right"))


def by_group(rows: list[dict[str, Any]], groups: list[str], methods: list[str], label: str, group_label: str,
             sub: list[str]) -> dict[str, Any]:
    """Grouped bars: one group per bucket/category (and overall), one bar per method, 95% rules."""
    pick = _pick()
    base = alt.Chart(alt.Data(values=rows)).encode(
        x=alt.X("group:N", sort=groups, title=group_label, axis=alt.Axis(labelAngle=0, labelLimit=120, labelExpr="split(datum.label, ' ')")),
        xOffset=alt.XOffset("method:N", sort=methods))
    bars = base.mark_bar().encode(
        y=alt.Y("value:Q", title=f"{label} (95% interval)", scale=alt.Scale(domain=[0, 1])),
        color=_color(methods), opacity=alt.condition(pick, alt.value(1.0), alt.value(0.25)),
        tooltip=[alt.Tooltip("method:N"), alt.Tooltip("group:N", title=group_label),
                 alt.Tooltip("value:Q", title=label, format=".3f"), alt.Tooltip("lo:Q", format=".3f"),
                 alt.Tooltip("hi:Q", format=".3f"), alt.Tooltip("n:Q"), alt.Tooltip("interval:N")],
    ).add_params(pick)
    rules = base.mark_rule(color="#333").encode(y="lo:Q", y2="hi:Q",
                                                opacity=alt.condition(pick, alt.value(0.9), alt.value(0.15)))
    chart = (bars + rules).properties(width=WIDTH, height=280, title=alt.TitleParams(
        f"{label} by {group_label}, one bar per method", subtitle=sub, anchor="start"))
    return chart.to_dict()


def frontier(rows: list[dict[str, Any]], methods: list[str], label: str, sub: list[str], log: bool,
             y_title: str | None = None) -> dict[str, Any]:
    """Mean context tokens per question against the headline, one point per method."""
    pick = _pick()
    xs = [r["tokens"] for r in rows]
    scale = (alt.Scale(type="log", domain=[min(xs) / 1.5, max(xs) * 1.5], nice=False) if log
             else alt.Scale(zero=True))
    ticks = [m * 10 ** e for e in range(0, 8) for m in (1, 2, 5) if min(xs) / 1.5 <= m * 10 ** e <= max(xs) * 1.5]
    axis = alt.Axis(values=ticks, format="~s") if log else alt.Axis(format="~s")
    x = alt.X("tokens:Q", title="mean context tokens per question" + (" (log)" if log else ""), scale=scale, axis=axis)
    base = alt.Chart(alt.Data(values=rows)).encode(x=x)
    points = base.mark_point(size=110, filled=True).encode(
        y=alt.Y("value:Q", title=y_title or f"overall {label}", scale=alt.Scale(domain=[0, 1])), color=_color(methods),
        shape=alt.Shape("method:N", sort=methods, legend=None),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.25)),
        tooltip=[alt.Tooltip("method:N"), alt.Tooltip("tokens:Q", format=",.0f"),
                 alt.Tooltip("value:Q", title=label, format=".3f"), alt.Tooltip("lo:Q", format=".3f"),
                 alt.Tooltip("hi:Q", format=".3f"), alt.Tooltip("n:Q")]).add_params(pick)
    rules = base.mark_rule(strokeWidth=1.5).encode(y="lo:Q", y2="hi:Q", color=_color(methods),
                                                   opacity=alt.condition(pick, alt.value(0.8), alt.value(0.15)))
    chart = (rules + points).properties(width=WIDTH, height=300, title=alt.TitleParams(
        f"Context tokens vs {label}", subtitle=sub, anchor="start"))
    return chart.to_dict()


def per_correct(rows: list[dict[str, Any]], methods: list[str], field: str, title: str, axis: str,
                sub: list[str]) -> dict[str, Any]:
    """What one correct answer costs each method (tokens or USD), as bars."""
    pick = _pick()
    chart = alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("method:N", sort=methods, title=None, axis=alt.Axis(labelAngle=-20)),
        y=alt.Y(f"{field}:Q", title=axis), color=_color(methods),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.25)),
        tooltip=[alt.Tooltip("method:N"), alt.Tooltip(f"{field}:Q", format=",.4g"),
                 alt.Tooltip("correct:Q", title="correct answers"), alt.Tooltip("n:Q")],
    ).add_params(pick).properties(width=WIDTH, height=240, title=alt.TitleParams(title, subtitle=sub, anchor="start"))
    return chart.to_dict()
