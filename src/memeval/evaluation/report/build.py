"""Assemble the report: one section per dataset, tables + figures, written as report.md and a
self-contained report.html (figures embedded as base64 PNG)."""

from __future__ import annotations

import base64
import datetime as dt
import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..runs.scored import ReportError, Run, load_run, load_runs
from . import figures
from .imported import published_table
from .judge_matrix import covers, load_matrix, matrix_figure, matrix_tables
from .prices import Reference, load_reference
from .statistics import statistics_tables, with_resampling_note
from .tables import Table, dataset_tables, paired_table, rules_table, table3

__all__ = ["ReportError", "build_report"]


@dataclass
class Section:
    title: str
    tables: list[Table] = field(default_factory=list)
    figures: list[tuple[str, Path]] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


def _section(dataset: str, runs: list[Run], reference: Run | None, fig_dir: Path,
             strict: bool, prices: Reference, allow_degenerate: bool = False,
             matrices: Sequence[dict[str, Any]] = ()) -> Section:
    p = runs[0].presentation
    sec = Section(f"{dataset} ({len(runs)} run{'s' if len(runs) > 1 else ''})")
    sec.tables += [*with_resampling_note(dataset_tables(runs), runs), *statistics_tables(runs), table3(runs, prices)]
    if (answer_sets := published_table(runs)) is not None:  # imported answers: published vs re-scored
        sec.tables.insert(0, answer_sets)
    if reference is not None:
        try:
            sec.tables.append(paired_table(runs, reference, allow_degenerate))
            if (by_rule := rules_table(runs, reference, allow_degenerate)) is not None:
                sec.tables.append(by_rule)
        except ReportError as exc:
            if strict:
                raise
            sec.messages.append(f"No paired differences: {exc}")
    stem = dataset.replace("/", "_")
    for k, matrix in enumerate(m for m in matrices if covers(m, runs)):
        sec.tables += matrix_tables(matrix, runs)
        sec.figures.append(("judge-sensitivity matrix",
                            matrix_figure(matrix, fig_dir / f"{stem}_judge_matrix{f'_{k}' if k else ''}.png")))
    drawn = [("by group (error bars: ± bootstrap std, the tables' ±)", figures.by_group(runs, p, fig_dir / f"{stem}_by_group.png")),
             ("context tokens vs score (error bars: ± bootstrap std, the tables' ±)",
              figures.frontier(runs, p, fig_dir / f"{stem}_frontier.png")),
             ("cost per method", figures.cost(runs, p, fig_dir / f"{stem}_cost.png", prices))]
    sec.figures += [(caption, path) for caption, path in drawn if path is not None]
    if len(sec.figures) < len(drawn):
        (fig_dir / f"{stem}_cost.png").unlink(missing_ok=True)  # an earlier report's, now empty
        sec.messages.append("No cost figure: no run paid anything and no token was recorded to price.")
    return sec


def _md_table(t: Table) -> str:
    lines = [f"### {t.title}", "", *(f"- {p}" for p in t.provenance), "",
             "| " + " | ".join(t.header) + " |", "|" + "---|" * len(t.header)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in t.rows]
    if t.notes:
        lines += ["", *t.notes]
    return "\n".join(lines)


def _html_table(t: Table) -> str:
    e = html.escape
    prov = "".join(f"<li>{e(p)}</li>" for p in t.provenance)
    head = "".join(f"<th>{e(h)}</th>" for h in t.header)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in t.rows)
    notes = "".join(f"<p class='note'>{e(n)}</p>" for n in t.notes)
    return (f"<h3>{e(t.title)}</h3><ul class='prov'>{prov}</ul>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes}")


_CSS = ("body{font-family:sans-serif;max-width:1200px;margin:2em auto;color:#222}"
        "table{border-collapse:collapse;margin:.5em 0;font-size:13px}"
        "td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}td:first-child{text-align:left}"
        "th{background:#f3f3f3}.prov{font-size:12px;color:#555}.note{font-size:12px;color:#555}"
        "img{max-width:100%;border:1px solid #eee}.msg{color:#a00}")


def render(sections: list[Section], out: Path, runs: list[Run]) -> tuple[Path, Path]:
    stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    folders = [f"- `{r.path}`" for r in runs]
    md = [f"# Comparison report ({stamp})", "", "Run folders:", *folders]
    body = [f"<h1>Comparison report ({stamp})</h1><p>Run folders:</p><ul>"
            + "".join(f"<li><code>{html.escape(str(r.path))}</code></li>" for r in runs) + "</ul>"]
    for s in sections:
        md += ["", f"## {s.title}"]
        body.append(f"<h2>{html.escape(s.title)}</h2>")
        for m in s.messages:
            md += ["", f"> {m}"]
            body.append(f"<pre class='msg'>{html.escape(m)}</pre>")
        for t in s.tables:
            md += ["", _md_table(t)]
            body.append(_html_table(t))
        for caption, path in s.figures:
            rel = path.relative_to(out)
            md += ["", f"![{caption}]({rel.as_posix()})"]
            data = base64.b64encode(path.read_bytes()).decode()
            body.append(f"<figure><img alt='{html.escape(caption)}' src='data:image/png;base64,{data}'>"
                        f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    md_path, html_path = out / "report.md", out / "report.html"
    md_path.write_text("\n".join(md) + "\n", encoding="utf-8")
    html_path.write_text("<!doctype html><html><head><meta charset='utf-8'><title>memeval report</title>"
                         f"<style>{_CSS}</style></head><body>{''.join(body)}</body></html>\n", encoding="utf-8")
    return md_path, html_path


def build_report(run_dirs: list[Path], out: Path, reference: Path | None = None,
                 auto_reference: str | None = None, allow_degenerate: bool = False,
                 prices: Reference | None = None, judge_matrices: Sequence[Path] = ()) -> tuple[Path, Path]:
    """Write report.md, report.html and figures/ into `out`; returns the two report paths.

    `reference`: paired differences of every run of its dataset against it (incomparable runs
    raise ReportError). `auto_reference`: a method name (e.g. "vanilla") used as each dataset's
    reference when present; incomparable runs then become a message in the report, not an error.
    `allow_degenerate`: star significant differences of runs that failed a health check too.
    `prices`: the API-equivalent cost's price table and reference models (default: prices.py's).
    `judge_matrices`: judge_matrix.json files (`memeval judge-matrix`), each shown in the section
    of the runs it re-judged.
    """
    prices = prices or load_reference()
    if not run_dirs:
        raise ReportError("no run folders given")
    runs = load_runs([Path(p) for p in run_dirs])
    matrices = [load_matrix(Path(p)) for p in judge_matrices]
    ref = None
    if reference is not None:
        ref = next((r for r in runs if r.path.resolve() == Path(reference).resolve()), None)
        if ref is None:
            ref = load_run(Path(reference))
            ref.label = f"{ref.method} (reference)"
            runs.append(ref)
    out.mkdir(parents=True, exist_ok=True)
    by_dataset: dict[str, list[Run]] = {}
    for r in runs:
        by_dataset.setdefault(r.dataset, []).append(r)
    sections = []
    for dataset, group in by_dataset.items():
        dref = ref if ref is not None and ref.dataset == dataset else None
        if dref is None and auto_reference:
            dref = next((r for r in group if r.method == auto_reference), None)
        if dref is not None and len(group) == 1:
            dref = None
        sections.append(_section(dataset, group, dref, out / "figures", strict=ref is not None,
                                 prices=prices, allow_degenerate=allow_degenerate, matrices=matrices))
    unmatched = [m for m in matrices if not any(covers(m, g) for g in by_dataset.values())]
    if unmatched:
        raise ReportError("judge matrix of runs not in this report: "
                          + ", ".join(sorted({Path(r['run']).name for m in unmatched for r in m['runs']}))
                          + "; give the run folders it re-judged")
    return render(sections, out, runs)
