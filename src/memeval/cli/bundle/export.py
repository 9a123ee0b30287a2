"""`export`: run folders -> results/<name>/ (runs, index artifacts, calls, report, README, manifest).

Which calls belong to a run is found by replaying it (cli/bundle/rerun.py) against the
cache it was made with: the replay reads exactly the calls the run needs, index included
(rebuilt in a scratch folder), and may make none. A run that would need a new call, or whose
replay does not rewrite its metrics.json byte for byte, is not exported: a bundle that verify
would reject is refused at the source, naming the run and what it lacks.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import lzma
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from memeval.evaluation.bundle import explained, facts, readme
from memeval.evaluation.bundle.manifest import (
    CALLS,
    FORMAT,
    MANIFEST,
    file_hashes,
    secret_leaks,
    sha256_file,
)
from memeval.evaluation.runs import index_usage
from memeval.evaluation.runs.folder import PACKED, artifact
from memeval.evaluation.runs.health_file import mark_of, read_health
from memeval.harness.versions import git, package_versions
from memeval.model_access.cache import ResponseCache
from memeval.model_access.cache_cli import export as export_calls

from . import explorer
from .rerun import Rerun, rerun

REQUIRED = ("config.yaml", "meta.json", "predictions.jsonl", "judgments.jsonl", "metrics.json")
RUN_SKIP = {"run.log", ".lock"}  # a log of local paths and a lock file: nothing a reader needs
INDEX_TEXT = {".json", ".jsonl", ".txt", ".dot", ".md", ".graphml", ".csv", ".tsv", ".yaml", ".yml"}
INDEX_MAX_BYTES = 1_000_000
NOTES = "NOTES.md"  # a larger index file is a matrix or a table dump, not for reading
# A run's JSONL artifact of this size or more ships packed (NAME.jsonl.xz, read by RunFolder as
# NAME.jsonl): contexts repeat across questions, which xz's large window finds and gzip's 32 kB
# window does not (an EpBench-20 vanilla predictions.jsonl at n = 200: 10.5 MB, gzip 3.6 MB, xz 37 kB).
PACK_MIN_BYTES = 500_000


class BundleError(RuntimeError):
    """An export that would produce a bundle verify rejects (or cannot be made at all)."""


def export_bundle(runs: list[Path], name: str, out_root: Path = Path("results"), cache: Path | None = None,
                  cache_backend: str | None = None, data_dir: Path | None = None,
                  reference: Path | None = None, force: bool = False, log: Any = print,
                  notes: Path | None = None, allow_unexplained: bool = False,
                  judge_matrix: Path | None = None) -> Path:
    """Write results/<name>/ from `runs`; returns its path. Raises BundleError, naming each failing run.
    `notes` (Markdown: what was measured while building, what broke and how it was fixed) ships as
    NOTES.md, covered by the manifest like every other file. NOTES.md always carries the run facts
    (empty contexts, failures, counts) generated from the bundled run folders
    (evaluation/bundle/facts.py), in place of the previous generated block or after the notes, and
    the health table; a failed check the notes give no reason for stops the export before any
    replay (evaluation/bundle/explained.py) unless `allow_unexplained`. `judge_matrix`: a
    `memeval judge-matrix` output folder made from these runs, shipped in judge_matrix/ and shown
    by the report and the explorer."""
    dest = out_root / name
    if dest.exists() and not force:
        raise BundleError(f"{dest} exists (pass --force to replace it)")
    rels = _bundle_paths(runs)
    hand = notes.read_text(encoding="utf-8") if notes is not None else f"# Build notes: `{name}`\n"
    matrix = _matrix_files(judge_matrix, runs) if judge_matrix is not None else None  # before any replay
    missing = explained.unexplained(hand, runs)  # before any replay: the runs' own health.json
    if missing and not allow_unexplained:
        raise BundleError(
            f"not exported: the notes give no reason for {len(missing)} failed health check(s): "
            f"{', '.join(missing)}. Write, in --notes, a paragraph or list item per check naming the "
            "method and the check and saying why the fail stands (or what mends it), or pass "
            "--allow-unexplained-fails to ship them listed as unexplained")
    values = ResponseCache(None)  # every call the replays read, whichever cache held it
    with tempfile.TemporaryDirectory(prefix="memeval-export-") as tmp:
        work, stage = Path(tmp), Path(tmp) / "bundle"
        results: list[Rerun] = []
        for i, run in enumerate(runs):
            res = rerun(run, work / f"replay{i}", cache, cache_backend, data_dir, values)
            log(f"{'OK  ' if res.ok else 'FAIL'} {rels[run]}  {res.seconds:.1f} s  {len(res.keys)} calls read")
            results.append(res)
        failed = [r for r in results if not r.ok]
        if failed:
            raise BundleError("not exported: " + "; ".join(
                f"{r.run}: " + " | ".join(r.problems(5)) for r in failed))
        skipped: list[dict[str, Any]] = []
        run_entries = [_copy_run(r, rels[r.run], stage, skipped) for r in results]
        n_calls = export_calls(values, stage / CALLS)
        by_path = {r.resolve(): rel for r, rel in rels.items()}
        ref = by_path.get(reference.resolve()) if reference is not None else next(
            (rels[r] for r in runs if _method(r) == _reference_method()), None)
        matrix_entry = _copy_matrix(matrix, stage, {r.name: rel for r, rel in rels.items()}) if matrix is not None else None
        matrix_json = Path(matrix_entry["json"]) if matrix_entry else None
        report_note = _report(stage, [rels[r] for r in runs], ref, matrix_json)
        explorer_note = explorer.write(stage, [rels[r] for r in runs], matrix_json)  # cli/bundle/explorer.py
        manifest = {
            "format": FORMAT, "name": name, "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "git_commit": git("rev-parse", "HEAD"), "git_dirty": bool(git("status", "--porcelain")),
            "versions": package_versions(), "data_versions": sorted({e["data_version"] for e in run_entries}),
            "runs": run_entries, "reference": ref, "report": report_note, "explorer": explorer_note,
            "calls": {"file": CALLS, "entries": n_calls, "sha256": sha256_file(stage / CALLS)},
            "skipped": skipped, "notes": NOTES, **({"judge_matrix": matrix_entry} if matrix_entry else {}),
        }
        staged = [stage / rels[r] for r in runs]
        generated = facts.section(staged, explained.health_lines(staged, missing))
        (stage / NOTES).write_text(facts.merge(hand, generated), encoding="utf-8")
        (stage / "README.md").write_text(readme.render(stage, manifest), encoding="utf-8")
        leaks = secret_leaks(stage)
        if leaks:
            raise BundleError(f"not exported: a secret from the environment appears in {', '.join(leaks)}")
        files = file_hashes(stage)
        manifest["files"] = files
        ignored = ignored_by_git(dest, [*files, MANIFEST])
        if ignored:
            raise BundleError(
                f"not exported: the git repository around {dest} ignores {len(ignored)} of its files, so a "
                f"commit would ship the bundle without them and `bundle verify` fails on every clone "
                f"(first: {'; '.join(ignored[:3])}): narrow that ignore rule (e.g. '/data' for the root "
                f"folder only) or export elsewhere (--out)")
        (stage / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        if dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(stage), dest)
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    log(f"bundle {dest}: {len(runs)} runs, {n_calls} calls, {size / 1e6:.2f} MB")
    return dest


def _bundle_paths(runs: list[Path]) -> dict[Path, str]:
    """runs/<dataset>/<run folder name> for each run; two runs may not share one."""
    out: dict[Path, str] = {}
    for run in runs:
        missing = [f for f in REQUIRED if not artifact(run / f).is_file()]
        if missing:
            raise BundleError(f"{run} is not a finished run folder: no {', '.join(missing)}")
        dataset = json.loads((run / "meta.json").read_text()).get("dataset") or run.parent.name
        rel = f"runs/{dataset}/{run.name}"
        if rel in out.values():
            raise BundleError(f"two runs would both be bundled as {rel}")
        out[run] = rel
    return out


def _reference_method() -> str | None:
    """The registered method whose class says it is the paired tables' default reference."""
    from memeval.plugins import registered

    return next((name for name, p in registered("method").items() if getattr(p.load(), "default_reference", False)),
                None)


def _method(run: Path) -> str:
    return str(json.loads((run / "meta.json").read_text()).get("method"))


def _copy_run(res: Rerun, rel: str, stage: Path, skipped: list[dict[str, Any]]) -> dict[str, Any]:
    """The run folder's files, its readable index artifacts and its key list, into the bundle."""
    target = stage / rel
    target.mkdir(parents=True)
    for f in sorted(res.run.iterdir()):
        if f.is_file() and f.name not in RUN_SKIP and not f.name.startswith("."):
            _copy_file(f, target)
        elif f.is_dir():  # wandb/ (offline W&B files): the run folder's own artifacts say it all
            skipped.append({"path": f"{rel}/{f.name}/", "bytes": _size(f), "reason": "W&B/tracking folder"})
    index_rel = None
    if res.index_dir is not None and res.index_dir.is_dir():
        index_rel = f"indexes/{res.index_dir.name}"
        if not (stage / index_rel).exists():
            _copy_index(res.index_dir, stage / index_rel, index_rel, skipped)
            _keep_build_record(res.run, stage / index_rel)
        if not (stage / index_rel).exists():  # nothing readable (e.g. Embedding RAG keeps no files)
            index_rel = None
    keys = stage / "keys" / f"{rel.removeprefix('runs/')}.txt"
    keys.parent.mkdir(parents=True, exist_ok=True)
    keys.write_text("".join(f"{k}\n" for k in sorted(res.keys)), encoding="utf-8")
    meta = json.loads((res.run / "meta.json").read_text())
    return {"path": rel, "method": meta.get("method"), "dataset": meta.get("dataset"),
            "data_version": meta.get("data_version"), "n_questions": meta.get("n_questions"),
            "run_git_commit": meta.get("git_commit"), "calls": len(res.keys),
            "keys": keys.relative_to(stage).as_posix(), "index_artifacts": index_rel,
            "export_replay_seconds": round(res.seconds, 1)}


def _copy_file(f: Path, target: Path) -> None:
    """One run file into the bundle: a large JSONL file packed (the same bytes for the same file,
    so a re-export is identical), anything else as it is."""
    if f.suffix == ".jsonl" and f.stat().st_size >= PACK_MIN_BYTES:
        (target / (f.name + PACKED)).write_bytes(lzma.compress(f.read_bytes(), preset=6))
    else:  # a bundled run's packed file is copied as it is
        shutil.copy2(f, target / f.name)


def _keep_build_record(run: Path, dst: Path) -> None:
    """The index's usage record as the run's own index folder kept it (its build, and the
    sessions that reused it), not the export's replay alone: a package's cached replay can make a
    few more or fewer calls (LightRAG's embedding batches, a Graphiti retry), and the bundle's
    build figures then moved between exports (56 and 59 calls for one LightRAG index). Only the
    run's corpora: another dataset's runs may share the folder."""
    record = index_usage.record_of_run(run)
    if dst.is_dir() and record is not None:
        (dst / index_usage.RECORD).write_text(record, encoding="utf-8")


def _copy_index(src: Path, dst: Path, rel: str, skipped: list[dict[str, Any]]) -> None:
    for f in sorted(src.rglob("*")):
        if not f.is_file() or f.name.startswith(".") or f.name.endswith(".lock"):
            continue
        sub = f.relative_to(src).as_posix()
        size = f.stat().st_size
        if f.suffix.lower() not in INDEX_TEXT or size > INDEX_MAX_BYTES:
            reason = "binary" if f.suffix.lower() not in INDEX_TEXT else f"over {INDEX_MAX_BYTES // 1_000_000} MB"
            skipped.append({"path": f"{rel}/{sub}", "bytes": size,
                            "reason": f"{reason} index file (embedding matrix / table): not read by the report "
                                      "or notebooks; verify rebuilds it from the calls"})
            continue
        (dst / sub).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, dst / sub)


MATRIX = "judge_matrix"
MATRIX_FILES = ("judge_matrix.json", "judge_matrix.md", "judge_matrix.png")


def _matrix_files(folder: Path, runs: list[Path]) -> tuple[list[Path], dict[str, Any]]:
    """The matrix's files and its judge_matrix.json, when it was made from (some of) these runs;
    else a BundleError."""
    files = [folder / n for n in MATRIX_FILES]
    if not files[0].is_file():
        raise BundleError(f"--judge-matrix {folder}: no judge_matrix.json there (make it with "
                          "`memeval judge-matrix RUN_DIR... --out DIR`)")
    data = json.loads(files[0].read_text(encoding="utf-8"))
    others = sorted({Path(r["run"]).name for r in data.get("runs", [])} - {r.name for r in runs})
    if others:
        raise BundleError(f"--judge-matrix {folder} was made from runs this export does not bundle: "
                          f"{', '.join(others)}; make it again from the exported run folders")
    stale = _stale_health(data, runs)
    if stale:
        raise BundleError(f"--judge-matrix {folder} shows health the runs no longer have ({'; '.join(stale)}): "
                          "make it again after `memeval health` (`memeval judge-matrix ... --replay`: 0 calls)")
    return [f for f in files if f.is_file()], data


def _stale_health(data: dict[str, Any], runs: list[Path]) -> list[str]:
    """'run: matrix says X, health.json says Y' for each matrix run whose recorded health is not
    its health.json's now: the matrix labels each method with the health it read when it was made."""
    now = {r.name: r for r in runs}
    out = []
    for entry in data.get("runs", []):
        run = now.get(Path(entry["run"]).name)
        if run is None or "health" not in entry:
            continue
        current = mark_of(read_health(run))
        if entry["health"] != current:
            out.append(f"{run.name}: {str(entry['health'])[:60]!r}, now {current[:60]!r}")
    return out


def _copy_matrix(matrix: tuple[list[Path], dict[str, Any]], stage: Path, rels: dict[str, str]) -> dict[str, Any]:
    """The matrix's files into the bundle, its runs named by their place in the bundle (`rels`:
    run folder name -> bundle path), not where the matrix was made (a scratch folder's path)."""
    files, data = matrix
    (stage / MATRIX).mkdir()
    for f in files:
        shutil.copy2(f, stage / MATRIX / f.name)
    named = {**data, "runs": [{**e, "run": rels.get(Path(e["run"]).name, e["run"])} for e in data.get("runs", [])]}
    if named != data:
        (stage / MATRIX / MATRIX_FILES[0]).write_text(json.dumps(named, indent=1) + "\n", encoding="utf-8")
    return {"dir": MATRIX, "json": f"{MATRIX}/{MATRIX_FILES[0]}", "every": data.get("every"),
            "n_questions": data.get("n_questions"), "judge": data.get("judge"), "calls": data.get("calls")}


def _report(stage: Path, rels: list[str], reference: str | None, matrix: Path | None = None) -> str:
    """The comparison report from the bundled run folders (`memeval report`)."""
    from memeval.evaluation.report import ReportError, build_report

    runs = [Path(r) for r in rels]
    matrices = [matrix] if matrix is not None else []
    with contextlib.chdir(stage):  # the report names its runs by these bundle-relative paths
        try:
            build_report(runs, Path("report"), Path(reference) if reference else None, judge_matrices=matrices)
            return f"memeval report {' '.join(rels)}" + (f" --reference {reference}" if reference else "")
        except ReportError as exc:
            if reference is None:
                raise BundleError(f"the report cannot be made from these runs: {exc}") from exc
            build_report(runs, Path("report"), None, judge_matrices=matrices)  # unpaired runs still get tables
            return f"memeval report {' '.join(rels)} (no paired differences: {exc})"


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def ignored_by_git(dest: Path, rels: list[str]) -> list[str]:
    """`source:line:pattern<TAB>path` for each of the bundle's files (relative to `dest`) that the
    git work tree holding `dest` ignores; none outside a work tree. A bundle is committed to be
    replayed from a clone, and a file git ignores never reaches one (the cognee index's `data/`
    folder, matched by a bare `data` rule, did)."""
    anchor = dest
    while not anchor.exists():
        anchor = anchor.parent
    top = git("rev-parse", "--show-toplevel", cwd=anchor)
    if not top:
        return []
    try:
        base = dest.resolve().relative_to(Path(top).resolve())
        done = subprocess.run(["git", "-C", top, "check-ignore", "-v", "--no-index", "--stdin"],
                              input="\n".join(str(base / r) for r in rels), capture_output=True, text=True)
    except (OSError, ValueError):
        return []
    return done.stdout.splitlines() if done.returncode == 0 else []  # 1: none ignored
