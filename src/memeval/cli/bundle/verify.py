"""`verify` and `import`: trust a bundle only after its hashes match, then replay or load its calls.

verify proves the bundle is self-sufficient: its calls go into a scratch cache (never the
user's), and every run is replayed from its config.yaml with new calls forbidden (a cache miss
is an error naming the call, raised before any server or API is contacted; no local server is
started). A run passes only with 0 new calls and a metrics.json identical byte for byte.

A verify says what it does while it replays (watch.py: each run's start, a line every 30 s, an
environment about to be built), can verify a few runs (`--run`), skips runs an interrupted verify
of the same bundle already verified (verify_state.py), and answers Ctrl-C with one line.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memeval.evaluation.bundle.manifest import check_files, load_manifest, unlisted
from memeval.harness.replay import Replay
from memeval.harness.versions import git
from memeval.methods.external import envs
from memeval.model_access.cache_cli import import_bundle
from memeval.model_access.cache_store import open_cache

from . import explorer, watch
from .rerun import Rerun, rerun
from .verify_state import EXPLORER_KEY, VerifyState, run_names, select_runs


def _checked(bundle: Path, log: Any) -> dict[str, Any] | None:
    """The manifest, when every listed file is present and unchanged; else None (problems logged)."""
    try:
        manifest = load_manifest(bundle)
    except (OSError, ValueError) as exc:
        log(f"FAIL {exc}")
        return None
    problems = check_files(bundle, manifest)
    for p in problems:
        log(f"FAIL manifest: {p}")
    for p in unlisted(bundle, manifest):
        log(f"note: {p} is not in the manifest (ignored)")
    if problems:
        log(f"verify FAILED: {len(problems)} of {len(manifest['files'])} files do not match manifest.json")
        return None
    return manifest


@dataclass
class _Progress:
    """How far a verify got, for the line Ctrl-C prints."""

    selected: int = 0
    ok: int = 0  # selected runs verified OK, earlier or in this verify
    current: str | None = None
    state: VerifyState | None = None


def verify_bundle(bundle: Path, data_dir: Path | None = None, work: Path | None = None, log: Any = print,
                  runs: list[str] | None = None, fresh: bool = False, state_dir: Path | None = None,
                  every: float = 30.0, note: Any = watch.say) -> int:
    """0 when every selected run (`runs`: names or globs; all by default) replays with 0 new calls and
    an identical metrics.json; 1 otherwise; 2 when a pattern matches no run; 130 on Ctrl-C.

    `log` gets the results (stdout), `note` the progress lines (stderr; one every `every` seconds
    during a replay). With a `state_dir` (the command's: --keep, else $MEMEVAL_HOME/verify), runs
    verified OK are recorded there (verify_state.py) and skipped by the next verify of the same
    bundle unless `fresh`."""
    progress = _Progress()
    try:
        with watch.sigint_noted() as pressed:
            return _verify(bundle, data_dir, work, log, runs, fresh, state_dir, every, note, progress, pressed)
    except KeyboardInterrupt:
        note(_interrupted(progress))
        return 130


def _interrupted(p: _Progress) -> str:
    if p.state is None:
        return "interrupted before any run was replayed: nothing verified yet"
    if p.state.path is None:
        return f"interrupted: {p.ok} of {p.selected} runs verified OK (not recorded: nothing to resume)"
    where = f" during the replay of {p.current}" if p.current else ""
    if p.ok == 0:
        return f"interrupted{where}: none of the {p.selected} runs verified yet; run the same command again"
    return (f"interrupted{where}: {p.ok} of {p.selected} runs verified OK so far (recorded in {p.state.path}); "
            f"run the same command again to resume, or add --fresh to redo them all")


def _verify(bundle: Path, data_dir: Path | None, work: Path | None, log: Any, patterns: list[str] | None,
            fresh: bool, state_dir: Path | None, every: float, note: Any, progress: _Progress,
            pressed: threading.Event) -> int:
    manifest = _checked(bundle, log)
    if manifest is None:
        return 1
    log(f"manifest: {len(manifest['files'])} files match (commit {manifest.get('git_commit')})")
    entries = manifest["runs"]
    chosen, unmatched = select_runs(entries, patterns)
    if unmatched:
        names = ", ".join(run_names(e)[2] for e in entries)
        note(f"error: --run {', '.join(unmatched)} matches no run of {bundle} (its runs: {names})")
        return 2
    state = VerifyState.open(state_dir, bundle, git("rev-parse", "HEAD"), fresh)
    progress.state, progress.selected = state, len(chosen)
    keys = [entries[i]["path"] for i in chosen]
    earlier = [k for k in keys if state.verified(k)]
    progress.ok = len(earlier)
    if earlier:
        at = max(str(state.done[k]["at"]) for k in earlier)
        log(f"{len(earlier)} of {len(keys)} runs already verified at {at} ({state.path}); --fresh to redo")
    if stale := state.stale(keys):
        log(f"note: {stale} run(s) verified earlier by another memeval commit are replayed again")
    explorer_ok = _explorer(bundle, manifest, log, state, bool(patterns))
    todo = [i for i in chosen if not state.verified(entries[i]["path"])]
    with tempfile.TemporaryDirectory(prefix="memeval-verify-") as tmp:
        root = work or Path(tmp)
        if todo and not _import_calls(bundle, manifest, root / "bundle_calls.sqlite", log):
            return 1
        for pos, i in enumerate(todo, 1):
            entry = entries[i]
            progress.current = entry["path"]
            res = _replay_one(bundle, entry, root / f"replay{i}", root / "bundle_calls.sqlite", data_dir,
                              f"[{pos}/{len(todo)}]", every, note)
            if pressed.is_set():  # the replay may have turned Ctrl-C into an error of its own
                raise KeyboardInterrupt
            progress.current = None
            log(f"{'OK  ' if res.ok else 'FAIL'} {entry['path']}  {res.seconds:.1f} s  "
                f"{len(res.keys)} calls replayed  [{pos}/{len(todo)}]")
            for p in res.problems():
                log(f"     {p}")
            if res.ok:
                state.record(entry["path"], res.seconds, len(res.keys))
                progress.ok += 1
    n, total = len(chosen), len(entries)
    scope = f"{n}/{n} runs" if n == total else f"{n}/{n} selected runs (of {total})"
    if progress.ok == n and explorer_ok:
        log(f"verify OK: {scope} reproduced metrics.json byte for byte with 0 new model calls"
            + (f" ({len(earlier)} verified earlier)" if earlier else ""))
        return 0
    if progress.ok == n:
        log("verify FAILED: the runs reproduced, but the shipped explorer is not current (see FAIL explorer)")
        return 1
    log(f"verify FAILED: {n - progress.ok} of {n} runs did not reproduce (see FAIL lines)")
    return 1


def _explorer(bundle: Path, manifest: dict[str, Any], log: Any, state: VerifyState, selected: bool) -> bool:
    """The explorer check (it rebuilds from every run), unless runs are selected or it passed before."""
    if selected:
        log("explorer: not checked (--run verifies the selected runs only)")
        return True
    if rec := state.verified(EXPLORER_KEY):
        log(f"explorer: already checked at {rec['at']}")
        return True
    t0 = time.perf_counter()
    ok = explorer.check(bundle, manifest, log)  # explorer/ rebuilds identically (or none shipped)
    if ok:
        state.record(EXPLORER_KEY, time.perf_counter() - t0, 0)
    return ok


def _import_calls(bundle: Path, manifest: dict[str, Any], cache_path: Path, log: Any) -> bool:
    """The bundle's calls into the scratch cache; False (logged) when a line fails its sha256."""
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    cache = open_cache(cache_path, "sqlite")
    try:
        counts = import_bundle(cache, bundle / manifest["calls"]["file"])
    finally:
        cache.close()
    if counts["rejected"]:
        log(f"verify FAILED: {counts['rejected']} call line(s) fail their sha256")
        return False
    kept = f", {counts['already_cached']} already there" if counts["already_cached"] else ""
    log(f"calls: {counts['added']} imported into a scratch cache ({cache_path}){kept}")
    return True


def _replay_one(bundle: Path, entry: dict[str, Any], dest: Path, cache_path: Path, data_dir: Path | None,
                tag: str, every: float, note: Any) -> Rerun:
    """One run's replay, announced (and its package environment, if it must be built first) and
    watched: a progress line every `every` seconds."""
    run = bundle / entry["path"]
    if dest.exists():  # a kept folder's earlier, interrupted replay: a replay starts clean
        shutil.rmtree(dest)
    n_q, calls = int(entry.get("n_questions") or 0), int(entry.get("calls") or 0)
    took = entry.get("export_replay_seconds")
    note(f"{tag} replaying {entry['path']} ({n_q} questions, {calls} calls"
         + (f"; {took} s when exported)" if took is not None else ")"))
    env = watch.package_env(run)
    if env and (line := envs.build_notice(env, f"needed to replay runs of {entry.get('method') or env.name}")):
        note(line)
    replay = Replay()
    with watch.watching(f"{tag} {run.name}",
                        lambda: watch.replay_status(dest, run.name, replay, calls, n_q), every, note):
        return rerun(run, dest, cache_path, "sqlite", data_dir, replay=replay)


def import_calls(bundle: Path, cache_path: Path, backend: str | None = None, log: Any = print) -> int:
    """Load the bundle's calls into a cache (never overwriting); 0 on success."""
    manifest = _checked(bundle, log)
    if manifest is None:
        return 1
    backend = backend or ("directory" if cache_path.is_dir() else "sqlite")
    cache = open_cache(cache_path, backend)
    try:
        counts = import_bundle(cache, bundle / manifest["calls"]["file"])
    finally:
        cache.close()
    log(f"import {bundle} -> {cache_path}: {counts['added']} added, {counts['already_cached']} already "
        f"cached, {counts['rejected']} rejected")
    return 1 if counts["rejected"] else 0
