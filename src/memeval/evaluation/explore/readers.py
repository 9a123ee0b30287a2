"""What the explorer reads beside a run's artifacts, each read tolerantly: a file that is absent,
or written by a newer helper in a shape this code does not know, becomes a note on the page, never
a failed build (health.json, judge_matrix.json, the index artifacts a method keeps)."""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..runs.health_file import read_health
from ..runs.scored import Run

JUDGE_MATRIX = "judge_matrix.json"
INDEX_FILE_SUFFIXES = (".txt", ".md", ".json")  # readable index artifacts, in the order a link prefers
INDEX_FILE_MAX_BYTES = 1_000_000
_SCORE_KEYS = ("score", "mean", "value", "accuracy", "j", "f1")


def health_view(run: Run) -> dict[str, Any] | None:
    """The run's health.json as the page shows it: status, the table mark, every check, and, per
    question, the warning or failing checks that name it with what they found there."""
    try:
        health = read_health(run.path)
    except (ValueError, TypeError, OSError) as exc:  # newer format or a shape this code cannot read
        return {"status": "unreadable", "mark": f"health.json unreadable: {exc}", "checks": [], "questions": {}}
    if health is None:
        return None
    questions: dict[str, list[str]] = {}
    for c in health.checks:
        if c.status not in ("warn", "fail"):  # ok, or nothing measured
            continue
        for q, found in c.questions.items():
            questions.setdefault(str(q), []).append(f"{c.name}: {found}" if found else c.name)
    return {"status": health.status, "mark": health.mark(),
            "checks": [_plain({k: v for k, v in asdict(c).items() if k != "questions"}) for c in health.checks],
            "questions": questions}


def _plain(obj: Any) -> Any:
    """JSON-safe: NaN and infinities become None (the page's JSON must parse)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    return obj


# -- the judge-sensitivity matrix (`memeval judge-matrix`) ------------------------------------

def find_judge_matrix(runs: list[Run]) -> Path | None:
    """judge_matrix.json in the runs' common folder or in one of the run folders."""
    parents = {r.path.resolve().parent for r in runs}
    places = [*(sorted(parents) if len(parents) == 1 else []), *(r.path for r in runs)]
    return next((p / JUDGE_MATRIX for p in places if (p / JUDGE_MATRIX).is_file()), None)


def read_judge_matrix(path: Path, labels: list[str]) -> dict[str, Any]:
    """score per method per criterion (and the rank correlations) from whatever shape the file
    has: {method: {criterion: x}}, {criterion: {method: x}}, a list of {method, criterion, score}
    rows, any of them under a key; x a number or a dict with a score. Unrecognised: the raw JSON."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return {"source": path.name, "error": f"unreadable: {exc}"}
    out: dict[str, Any] = {"source": path.name}
    own = _own_matrix(data)
    if own is not None:  # `memeval judge-matrix`'s own artifact: read by its keys, not guessed
        return {**out, **own}
    grid = _grid(data, labels)
    if grid is None:
        return {**out, "error": "shape not recognised; shown as saved", "raw": _plain(data)}
    methods, criteria, cells = grid
    out.update(methods=methods, criteria=criteria, scores=cells)
    tau = _find(data, lambda k: "tau" in k.lower() or "kendall" in k.lower())
    if tau is not None:
        out["tau"] = _plain(tau)
    notes: list[str] = []
    for k in ("note", "notes", "judge", "judge_model"):
        v = data.get(k) if isinstance(data, dict) else None
        if v is not None:
            notes += [f"{k}: {x}" for x in (v if isinstance(v, list) else [v])]
    if notes:
        out["notes"] = notes
    return out


def _own_matrix(data: Any) -> dict[str, Any] | None:
    """Scores and taus of evaluation/judge_matrix's judge_matrix.json (its `runs`, each with a
    method and a score per criterion, and `kendall_tau`); None for any other file. The shape
    guesses below once took its `kendall_p` table (criterion by criterion) for the scores."""
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list) or "kendall_tau" not in data:
        return None
    runs = data["runs"]
    if not runs or not all(isinstance(r, dict) and "method" in r and isinstance(r.get("scores"), dict) for r in runs):
        return None
    criteria = list(data.get("criteria") or dict.fromkeys(c for r in runs for c in r["scores"]))
    out = {"methods": [str(r["method"]) for r in runs], "criteria": criteria,
           "scores": [[_number(r["scores"].get(c)) for c in criteria] for r in runs],
           "tau": _plain(data["kendall_tau"])}
    if data.get("judge"):
        out["notes"] = [f"judge: {data['judge']}"]
    return out


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int | float):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, dict):
        return next((n for k in _SCORE_KEYS if (n := _number(v.get(k))) is not None), None)
    return None


def _find(data: Any, want: Any) -> Any:
    """The value of the first key (depth first) for which want(key) holds."""
    if isinstance(data, dict):
        for k, v in data.items():
            if want(str(k)):
                return v
        for v in data.values():
            found = _find(v, want)
            if found is not None:
                return found
    return None


def _grid(data: Any, labels: list[str]) -> tuple[list[str], list[str], list[list[float | None]]] | None:
    rows = data if isinstance(data, list) else None
    if rows is None and isinstance(data, dict):
        rows = next((v for v in data.values() if isinstance(v, list) and v and isinstance(v[0], dict)
                     and {"method", "criterion"} <= set(v[0])), None)
    if rows and all(isinstance(r, dict) and "method" in r and "criterion" in r for r in rows):
        table: dict[str, dict[str, Any]] = {}
        for r in rows:
            table.setdefault(str(r["method"]), {})[str(r["criterion"])] = r
        return _oriented(table, labels)
    if isinstance(data, dict):
        if _is_table(data):
            return _oriented(data, labels)
        for k in ("scores", "matrix", "score", "results"):
            if isinstance(data.get(k), dict) and _is_table(data[k]):
                return _oriented(data[k], labels)
        for k, v in data.items():
            if not _is_correlation(k) and isinstance(v, dict) and _is_table(v):
                return _oriented(v, labels)
    return None


def _is_correlation(key: str) -> bool:
    """A table of criterion against criterion (rank correlations, their p-values), not scores."""
    k = key.lower()
    return "tau" in k or "kendall" in k or "corr" in k or k.endswith("_p") or "p_value" in k


def _is_table(d: dict[str, Any]) -> bool:
    inner = [v for v in d.values()]
    return bool(inner) and all(isinstance(v, dict) and v and any(_number(x) is not None for x in v.values())
                               for v in inner)


def _oriented(table: dict[str, dict[str, Any]], labels: list[str]) -> tuple[list[str], list[str], list[list[float | None]]]:
    """Methods as rows: the outer keys unless the inner keys are the method labels."""
    outer = list(table)
    inner = list(dict.fromkeys(k for v in table.values() for k in v))
    if not set(outer) & set(labels) and set(inner) & set(labels):
        table = {m: {c: table[c].get(m) for c in outer} for m in inner}
        outer, inner = inner, outer
    return outer, inner, [[_number(table[m].get(c)) for c in inner] for m in outer]


# -- index artifacts a method keeps (GSW workspaces, SEEM frames and fusion decisions) --------

def index_folder(run: Run) -> Path | None:
    """The run's index folder where it is on disk: under the bundle's indexes/ when the run sits
    in a result bundle (bundle export copies an index folder there under its own name), else as
    index.json names it (relative to the folder the run was made from, or absolute)."""
    try:
        named = json.loads((run.path / "index.json").read_text(encoding="utf-8")).get("index_folder")
    except (OSError, ValueError):
        return None
    if not named:
        return None
    top = run.path.parent.parent.parent  # runs/<dataset>/<run>: the project or the bundle
    # a bundle's own copy first: the page must link inside the bundle wherever it is opened
    for cand in (top / "indexes" / Path(named).name, top / named, Path(named)):
        if cand.is_dir():
            return cand
    return None


def index_links(run: Run, corpus_ids: list[str], links_from: Path) -> dict[str, Any]:
    """Links (relative to the site) into the run's index: per unit the readable file named after
    it (GSW's chapters/<unit>.txt), and the corpus folder's own readable files (SEEM's
    memory.json: frames and fusion decisions). Empty when the method keeps no such files."""
    root = index_folder(run)
    if root is None:
        return {}
    out: dict[str, Any] = {}
    for corpus in corpus_ids:
        folder = root / corpus
        if not folder.is_dir():
            continue
        files = [f for f in sorted(folder.rglob("*")) if f.is_file() and f.suffix in INDEX_FILE_SUFFIXES
                 and f.stat().st_size <= INDEX_FILE_MAX_BYTES and "package" not in f.relative_to(folder).parts
                 and not f.name.startswith(("index_done", "."))]
        units: dict[str, str] = {}
        for f in sorted(files, key=lambda f: INDEX_FILE_SUFFIXES.index(f.suffix)):
            if f.parent != folder:
                units.setdefault(f.stem, _rel(f, links_from))
        top = {f.name: _rel(f, links_from) for f in files if f.parent == folder}
        if units or top:
            out[corpus] = {"units": units, "files": top}
    return out


def _rel(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path, base)).as_posix()
