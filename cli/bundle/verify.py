"""`verify` and `import`: trust a bundle only after its hashes match, then replay or load its calls.

verify proves the bundle is self-sufficient: its calls go into a scratch cache (never the
user's), and every run is replayed from its config.yaml with new calls forbidden (a cache miss
is an error naming the call, raised before any server or API is contacted; no local server is
started). A run passes only with 0 new calls and a metrics.json identical byte for byte.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from evaluation.bundle.manifest import check_files, load_manifest, unlisted
from model_access.cache_cli import import_bundle
from model_access.cache_store import open_cache

from . import explorer
from .rerun import rerun


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


def verify_bundle(bundle: Path, data_dir: Path | None = None, work: Path | None = None, log: Any = print) -> int:
    """0 when every run replays with 0 new calls and identical metrics.json; 1 otherwise."""
    manifest = _checked(bundle, log)
    if manifest is None:
        return 1
    log(f"manifest: {len(manifest['files'])} files match (commit {manifest.get('git_commit')})")
    explorer_ok = explorer.check(bundle, manifest, log)  # explorer/ rebuilds identically (or none shipped)
    with tempfile.TemporaryDirectory(prefix="memeval-verify-") as tmp:
        root = work or Path(tmp)
        cache_path = root / "bundle_calls.sqlite"
        cache = open_cache(cache_path, "sqlite")
        counts = import_bundle(cache, bundle / manifest["calls"]["file"])
        cache.close()
        if counts["rejected"]:
            log(f"verify FAILED: {counts['rejected']} call line(s) fail their sha256")
            return 1
        log(f"calls: {counts['added']} imported into a scratch cache ({cache_path})")
        ok = 0
        for i, entry in enumerate(manifest["runs"]):
            res = rerun(bundle / entry["path"], root / f"replay{i}", cache_path, "sqlite", data_dir)
            log(f"{'OK  ' if res.ok else 'FAIL'} {entry['path']}  {res.seconds:.1f} s  "
                f"{len(res.keys)} calls replayed")
            for p in res.problems():
                log(f"     {p}")
            ok += res.ok
    n = len(manifest["runs"])
    if ok == n and explorer_ok:
        log(f"verify OK: {n}/{n} runs reproduced metrics.json byte for byte with 0 new model calls")
        return 0
    if ok == n:
        log("verify FAILED: the runs reproduced, but the shipped explorer is not current (see FAIL explorer)")
        return 1
    log(f"verify FAILED: {n - ok} of {n} runs did not reproduce (see FAIL lines)")
    return 1


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
