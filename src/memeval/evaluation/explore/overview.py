"""A dataset's overview: one summary row per run (headline with its interval, health mark, failure
labels, tokens and cost per correct answer), the report's own tables, the charts and the
judge-sensitivity matrix, all from the runs' presentation (no family is named here)."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

from ..presentation import Presentation
from ..report.tables import (
    WEIGHTED,
    WEIGHTED_NOTE,
    Table,
    dataset_tables,
    overall_axis,
    overall_columns,
    provenance,
    table3,
)
from ..runs.scored import Run
from . import charts
from .questions import LABEL_ORDER, NO_LABEL, UNSEEN
from .readers import find_judge_matrix, read_judge_matrix

QUERY_STAGES = ("retrieve", "answer")
ALL_STAGES = ("index", "retrieve", "answer", "judge")


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) else None


def shared_setup(runs: list[Run]) -> dict[str, str]:
    """answering model, judge, credit: one value, or every value joined when the runs differ."""
    out = {}
    for key in ("answer_model", "judge_model", "credit", "policy", "context_cap", "subset", "data_version"):
        values = list(dict.fromkeys(r.provenance()[key] for r in runs))
        out[key] = values[0] if len(values) == 1 else " | ".join(values)
    return out


def groups_of(runs: list[Run], p: Presentation) -> list[str]:
    """The groups any run has, in the declared order first."""
    seen = p.ordered([g for r in runs for g in p.group_metrics(r.metrics)])
    return [g for g in seen if any(g in p.group_metrics(r.metrics) for r in runs)]


def group_names(runs: list[Run], p: Presentation) -> dict[str, str]:
    names: dict[str, str] = {}
    for r in runs:
        found = r.metrics.get(p.group_names) if p.group_names else None
        if isinstance(found, dict):
            names.update({str(k): str(v) for k, v in found.items()})
    return names


def _cell(cell: dict[str, Any] | None, metric: str) -> dict[str, Any]:
    cell = cell or {}
    lo, hi, how = charts.interval(cell, metric)
    return {"value": _num(cell.get(metric)), "std": _num(cell.get(f"{metric}_std")), "lo": lo, "hi": hi,
            "interval": how, "n": cell.get("n")}


def interval_note(runs: list[Run]) -> str:
    """What the page's ± and error bars are, in the report's words (its tables' "± = bootstrap std
    over questions", its figures' "(± bootstrap std)"), with the resampling unit the runs used."""
    units = list(dict.fromkeys(str((r.metrics.get("statistics") or {}).get("resampling_unit", "question"))
                               for r in runs))
    over = " or ".join(f"{u}s" for u in units)
    how = "bootstrap std" if units == ["question"] else "cluster bootstrap std (a unit's questions drawn together)"
    stratified = any(r.weighted_overall is not None for r in runs)
    weighted = ", the population-weighted overall's a stratified bootstrap std (draws within each stratum)" if stratified else ""
    notes = dict.fromkeys(f" Note on the ±: {st['note']}." for r in runs if (st := r.metrics.get("statistics") or {}).get("note"))
    return (f"± = {how} over {over}{weighted}, as in the report's tables and figures: every error bar spans "
            f"value ± 1 std (clipped to 0-1), not a 95% interval (about ± 1.96 std, twice as wide)."
            + (" No ± where a stratum is too small to estimate one." if stratified else "") + "".join(notes))


def failed(health: dict[str, Any] | None) -> bool:
    """The run failed a health check (health.json's status); no health.json is not a failure."""
    return health is not None and health.get("status") == "fail"


def run_summary(run: Run, p: Presentation, groups: list[str], labels: list[str],
                health: dict[str, Any] | None, has_index: bool) -> dict[str, Any]:
    counts = Counter(labels)
    correct = counts.get("correct", 0)
    query_tokens = run.stage_tokens(QUERY_STAGES)
    all_tokens = run.stage_tokens(ALL_STAGES)
    usd = run.cost("fresh") + run.cost("cached")
    return {
        "label": run.label, "method": run.method, "path": run.path.as_posix(), "provenance": run.provenance(),
        "health": health, "failed": failed(health), "headline": _cell(run.metrics.get(p.overall), p.metric),
        "weighted": _cell(run.weighted_overall, p.metric) if run.weighted_overall is not None else None,
        "groups": {g: _cell(p.group_metrics(run.metrics).get(g), p.metric) for g in groups},
        "context_tokens": _num(run.mean_context_tokens), "n_questions": len(run.predictions),
        "labels": {k: counts.get(k, 0) for k in LABEL_ORDER if counts.get(k, 0) or k not in (NO_LABEL, UNSEEN)},
        "correct": correct, "query_tokens": query_tokens, "all_tokens": all_tokens, "usd": usd,
        "query_tokens_per_correct": query_tokens / correct if correct else None,
        "usd_per_correct": usd / correct if correct and usd else None, "index": has_index,
    }


def _table(t: Table) -> dict[str, Any]:
    return {"title": t.title, "provenance": t.provenance, "header": t.header, "rows": t.rows, "notes": t.notes}


def _health_mark(summary: dict[str, Any]) -> str:
    return charts.FAILED if summary["failed"] else charts.PASSED


def chart_specs(summaries: list[dict[str, Any]], p: Presentation, groups: list[str], names: dict[str, str],
                setup: dict[str, str]) -> dict[str, Any]:
    methods = [s["label"] for s in summaries]
    sub = charts.subtitle(setup, [s["headline"]["n"] if s["headline"]["n"] is not None else s["n_questions"]
                                  for s in summaries])
    weighted = [s["weighted"] is not None for s in summaries]
    overall = overall_columns(any(weighted))
    rows = []
    for s in summaries:
        cells = {**s["groups"], "overall": s["headline"], WEIGHTED: s["weighted"]}
        for g in [*groups, *overall]:
            c = cells.get(g) or {}
            if c.get("value") is not None:
                rows.append({"method": s["label"], "group": overall.get(g) or names.get(g, g),
                             "value": c["value"], "lo": c.get("lo"), "hi": c.get("hi"), "std": c.get("std"),
                             "n": c.get("n"), "health": _health_mark(s)})
    order = [names.get(g, g) for g in groups] + list(overall.values())
    what = p.group_label if groups else "overall"
    out = {"by_group": charts.by_group(rows, order, methods, p.label, what,
                                       [*sub, *WEIGHTED_NOTE.format(what=what).split("\n")] if any(weighted) else sub)}
    point = "weighted" if all(weighted) else "headline"
    points = [{"method": s["label"], "tokens": s["context_tokens"], "value": s[point]["value"],
               "lo": s[point]["lo"], "hi": s[point]["hi"], "std": s[point]["std"], "n": s["n_questions"],
               "health": _health_mark(s)}
              for s in summaries if s["context_tokens"] and s[point]["value"] is not None]
    if points:
        xs = [pt["tokens"] for pt in points]
        out["frontier"] = charts.frontier(points, methods, p.label, sub, log=max(xs) / min(xs) > 20,
                                          y_title=overall_axis(p.label, point == "weighted"))
    cost = [{"method": s["label"], "tokens": s["query_tokens_per_correct"], "usd": s["usd_per_correct"],
             "correct": s["correct"], "n": s["n_questions"], "health": _health_mark(s)} for s in summaries]
    tok = [c for c in cost if c["tokens"] is not None]
    if tok:
        out["tokens_per_correct"] = charts.per_correct(
            tok, methods, "tokens", "Query tokens per correct answer (retrieve + answer stages)",
            "tokens / correct answer", sub)
    usd = [c for c in cost if c["usd"] is not None]
    if usd:
        out["usd_per_correct"] = charts.per_correct(usd, methods, "usd", "Cost per correct answer (all stages, USD)",
                                                    "USD / correct answer", sub)
    return out


def overview(dataset: str, runs: list[Run], labels: dict[str, list[str]], health: dict[str, Any],
             has_index: dict[str, bool], judge_matrix: Path | None) -> dict[str, Any]:
    """Everything the overview page shows for one dataset's runs."""
    p = runs[0].presentation
    groups = groups_of(runs, p)
    names = group_names(runs, p)
    summaries = [run_summary(r, p, groups, labels[r.label], health.get(r.label), has_index.get(r.label, False))
                 for r in runs]
    setup = shared_setup(runs)
    notes = []
    if not any(s["usd"] for s in summaries):
        notes.append("Every model of these runs is unpriced (local): the cost chart shows tokens per correct "
                     "answer only.")
    if not any(s["health"] for s in summaries):
        notes.append("No run has a health.json yet (`memeval health RUN_DIR...` writes one): health marks are "
                     "blank.")
    path = judge_matrix or find_judge_matrix(runs)
    return {
        "dataset": dataset, "label": p.label, "metric": p.metric, "group_label": p.group_label,
        "group_field": p.group_field, "groups": groups, "group_names": names, "setup": setup,
        "provenance": provenance(runs), "methods": summaries,
        "tables": [_table(t) for t in [*dataset_tables(runs), table3(runs)]],
        "charts": chart_specs(summaries, p, groups, names, setup), "notes": notes,
        "judge_matrix": read_judge_matrix(path, [r.label for r in runs]) if path is not None else None,
        "correct_means": "failure label `correct`: the protocol's full credit (headline score = 1)",
        "interval_note": interval_note(runs),
    }
