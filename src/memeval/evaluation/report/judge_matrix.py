"""The judge-sensitivity matrix in the report: a saved judge_matrix.json (`memeval judge-matrix`)
as two tables and its figure in the section of the runs it re-judged. The report judges nothing:
it shows the matrix artifact as written, and says which of the section's runs it covers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..judge_matrix.render import cell, figure, sample, scope_note, setup
from ..protocol import fmt
from ..runs.scored import ReportError, Run
from .tables import HEALTH, HEALTH_NOTE, Table


def load_matrix(path: Path) -> dict[str, Any]:
    """judge_matrix.json (a folder holding one is accepted), or a ReportError naming the fix."""
    path = path / "judge_matrix.json" if path.is_dir() else path
    if not path.exists():
        raise ReportError(f"{path}: no judge matrix there; write one with `memeval judge-matrix RUN_DIR... --out DIR`")
    matrix = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(matrix, dict) or "kendall_tau" not in matrix or "runs" not in matrix:
        raise ReportError(f"{path} is not a judge_matrix.json written by `memeval judge-matrix`")
    return matrix


def covers(matrix: dict[str, Any], runs: list[Run]) -> bool:
    """Whether the matrix re-judged runs of this section (matched by run folder name)."""
    names = {r.path.name for r in runs}
    return any(Path(r["run"]).name in names for r in matrix["runs"])


def matrix_tables(matrix: dict[str, Any], runs: list[Run]) -> list[Table]:
    crit = list(matrix["criteria"])
    by_name = {x.path.name: x for x in runs}
    judged = {Path(r["run"]).name for r in matrix["runs"]}
    rows = []
    for r in matrix["runs"]:
        run = by_name.get(Path(r["run"]).name)
        rows.append([r["method"], *(cell(matrix, r, c) for c in crit),
                     run.health_cell if run is not None else "not in this report"])
    missing = sorted(x.label for x in runs if x.path.name not in judged)
    prov = [f"{setup(matrix)}; prompts: {matrix.get('prompt_version', '?')}; {sample(matrix)}",
            f"runs: {len(judged & by_name.keys())} of this section's {len(runs)}"
            + (f" (not re-judged: {', '.join(missing)})" if missing else "")]
    notes = [f"Each cell: the method's mean per-question score under that criterion over {scope_note(matrix)}, "
             "its rank in brackets; a judge failure is left out of the mean and counted.",
             "Criteria: " + "; ".join(f"{c} = {d}" for c, d in matrix["criteria"].items()) + ".",
             f"Judge calls: {matrix['calls'].get('fresh', 0)} fresh, {matrix['calls'].get('cached', 0)} from the "
             "cache. The same answers, judged differently: where the rankings disagree (tau well below 1), the "
             "comparison depends on the judging criterion."]
    scores = Table("Judge-sensitivity matrix: score per method under each judging criterion", prov,
                   ["method", *crit, HEALTH], rows, [*notes, HEALTH_NOTE])
    tau = Table("Kendall tau between the criteria's method rankings", prov, ["", *crit],
                [[a, *(fmt(matrix["kendall_tau"][a][b], 2) for b in crit)] for a in crit],
                [f"tau-b over {len(matrix['runs'])} methods; with so few methods one swapped pair moves tau by "
                 f"about {2 / max(1, len(matrix['runs']) * (len(matrix['runs']) - 1) / 2):.2f}."])
    return [scores, tau]


def matrix_figure(matrix: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return figure(matrix, path)
