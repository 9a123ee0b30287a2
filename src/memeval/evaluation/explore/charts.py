"""The overview's charts as Vega-Lite specs, built with altair (the spec is checked against the
Vega-Lite schema when it is made) and drawn in the page by the bundled vega-embed.

Each chart's subtitle names what a number means there: answering model, judge, credit and n.
Every selection is named, so two builds of the same runs write the same spec byte for byte.
"""

from __future__ import annotations

from typing import Any

import altair as alt

WIDTH = 470
# The error bars are the report's: value ± 1 bootstrap std (the tables' "±", the report figures'
# "(± bootstrap std)"), never a 95% interval, so the two never show one run two ways unnamed.
ERROR_BARS = "± bootstrap std"
# Vega's tableau10 (its default), then ten more: fixed per method, so a method keeps its color when
# the page's method picker leaves others out (the page filters the domain and range together).
PALETTE = ("#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d",
           "#bab0ac", "#1f3f73", "#a34f00", "#8c1d1d", "#2f6f69", "#2d6127", "#9c7f00", "#6a3f63", "#c2485a",
           "#5c4033", "#6f6a66")
FAILED = "failed a health check"
PASSED = "no failed check"


def _pick() -> Any:
    """Click a method in the legend to bring it forward (the others fade)."""
    return alt.selection_point(name="method_pick", fields=["method"], bind="legend")


def subtitle(setup: dict[str, str], ns: list[int]) -> list[str]:
    n = (f"n = {ns[0]}" if len(set(ns)) == 1 else f"n = {min(ns)}-{max(ns)}") if ns else "n = –"
    n += " per method (the headline's questions; each bar's own n in its tooltip)"
    return [f"answering model {setup['answer_model']} · judge {setup['judge_model']}",
            f"{setup['credit']} credit · {n}"]


def interval(cell: dict[str, Any], metric: str) -> tuple[float | None, float | None, str]:
    """The cell's error bar: value ± 1 bootstrap std (clipped to 0-1), as the report draws it."""
    v = cell.get(metric)
    std = cell.get(f"{metric}_std")
    if not isinstance(v, int | float) or not isinstance(std, int | float):
        return None, None, ""
    return max(0.0, v - std), min(1.0, v + std), ERROR_BARS


def _color(order: list[str]) -> alt.Color:
    palette = [PALETTE[i % len(PALETTE)] for i in range(len(order))]
    return alt.Color("method:N", sort=order, title="method", legend=alt.Legend(orient="right"),
                     scale=alt.Scale(domain=order, range=palette))


def _health() -> dict[str, Any]:
    """A run that failed a health check is drawn faded with a dashed outline (the report hatches
    and fades its bars); the dash carries the legend (Vega-Lite draws none for a nominal opacity)."""
    domain = [PASSED, FAILED]
    return {"fillOpacity": alt.FillOpacity("health:N", scale=alt.Scale(domain=domain, range=[1.0, 0.35]), legend=None),
            "strokeDash": alt.StrokeDash("health:N", title="health", scale=alt.Scale(domain=domain, range=[[1, 0], [3, 2]]),
                                         legend=alt.Legend(orient="right", symbolType="square", symbolStrokeColor="#444",
                                                           symbolFillColor="#c8d3e3", symbolStrokeWidth=1.5))}


def by_group(rows: list[dict[str, Any]], groups: list[str], methods: list[str], label: str, group_label: str,
             sub: list[str]) -> dict[str, Any]:
    """Grouped bars: one group per bucket/category (and overall), one bar per method, a rule of
    ± 1 bootstrap std on each (the report's error bars)."""
    pick = _pick()
    base = alt.Chart(alt.Data(values=rows)).encode(
        x=alt.X("group:N", sort=groups, title=group_label, axis=alt.Axis(labelAngle=0, labelLimit=120, labelExpr="split(datum.label, ' ')")),
        xOffset=alt.XOffset("method:N", sort=methods))
    bars = base.mark_bar().encode(
        y=alt.Y("value:Q", title=f"{label} ({ERROR_BARS})", scale=alt.Scale(domain=[0, 1])),
        color=_color(methods), **_health(), opacity=alt.condition(pick, alt.value(1.0), alt.value(0.25)),
        stroke=_color(methods).legend(None), strokeWidth=alt.value(1),
        tooltip=[alt.Tooltip("method:N"), alt.Tooltip("group:N", title=group_label),
                 alt.Tooltip("value:Q", title=label, format=".3f"), alt.Tooltip("std:Q", title="bootstrap std", format=".3f"),
                 alt.Tooltip("n:Q"), alt.Tooltip("health:N")],
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
    points = base.mark_point(size=110, filled=True, strokeWidth=1.5).encode(
        y=alt.Y("value:Q", title=f"{y_title or f'overall {label}'} ({ERROR_BARS})", scale=alt.Scale(domain=[0, 1])),
        color=_color(methods), **_health(), stroke=_color(methods).legend(None),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.25)),
        tooltip=[alt.Tooltip("method:N"), alt.Tooltip("tokens:Q", format=",.0f"),
                 alt.Tooltip("value:Q", title=label, format=".3f"), alt.Tooltip("std:Q", title="bootstrap std", format=".3f"),
                 alt.Tooltip("n:Q"), alt.Tooltip("health:N")]).add_params(pick)
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
        y=alt.Y(f"{field}:Q", title=axis), color=_color(methods), **_health(),
        stroke=_color(methods).legend(None), strokeWidth=alt.value(1),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.25)),
        tooltip=[alt.Tooltip("method:N"), alt.Tooltip(f"{field}:Q", format=",.4g"),
                 alt.Tooltip("correct:Q", title="correct answers"), alt.Tooltip("n:Q"), alt.Tooltip("health:N")],
    ).add_params(pick).properties(width=WIDTH, height=240, title=alt.TitleParams(title, subtitle=sub, anchor="start"))
    return chart.to_dict()
