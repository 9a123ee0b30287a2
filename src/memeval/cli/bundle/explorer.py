"""A bundle's explorer (`memeval explore` over its run folders, in explorer/): export writes it,
verify rebuilds it from the bundled runs and checks the shipped copy is the same, file for file.

Both build from inside the bundle with bundle-relative run paths, so the pages name the runs
as the bundle holds them and link into its indexes/ folder the same way wherever it is checked.
`rebuild` brings a shipped bundle's explorer up to today's page code (0 calls: it reads only the
bundled runs) and records the new files' sha256s in the manifest.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path
from typing import Any

EXPLORER = "explorer"


def write(stage: Path, rels: list[str], judge_matrix: Path | None = None) -> dict[str, Any]:
    """Build explorer/ inside the staged bundle (with the bundle's judge matrix, if it ships one);
    returns the manifest's `explorer` entry."""
    from memeval.evaluation.explore import build_site

    with contextlib.chdir(stage):
        site = build_site([Path(r) for r in rels], Path(EXPLORER), judge_matrix=judge_matrix)
    matrix = f" --judge-matrix {judge_matrix.as_posix()}" if judge_matrix is not None else ""
    return {"dir": EXPLORER, "index": f"{EXPLORER}/index.html", "files": len(site.files),
            "command": f"memeval explore {' '.join(rels)}{matrix} --out {EXPLORER}"}


def check(bundle: Path, manifest: dict[str, Any], log: Any) -> bool:
    """True when the shipped explorer is what today's code builds from the bundled runs (or the
    bundle predates explorers, which is noted, not failed)."""
    entry = manifest.get("explorer")
    if not entry:
        log("note: this bundle ships no explorer (exported before `memeval explore`)")
        return True
    from memeval.evaluation.explore import build_site
    from memeval.evaluation.explore.site import generated_files

    rels = [Path(r["path"]) for r in manifest["runs"]]
    with tempfile.TemporaryDirectory(prefix="memeval-explorer-") as tmp, contextlib.chdir(bundle):
        matrix = (manifest.get("judge_matrix") or {}).get("json")
        build_site(rels, Path(tmp) / EXPLORER, judge_matrix=Path(matrix) if matrix else None,
                   links_from=Path(entry["dir"]))
        fresh, shipped = generated_files(Path(tmp) / EXPLORER), generated_files(Path(entry["dir"]))
    stale = sorted(k for k in fresh.keys() | shipped.keys() if fresh.get(k) != shipped.get(k))
    if stale:
        log(f"FAIL explorer: {len(stale)} of {len(fresh)} files differ from a fresh build ({', '.join(stale[:5])}); "
            f"rebuild it with `memeval bundle explorer {bundle.as_posix()}` (0 calls; updates the manifest)")
        return False
    log(f"explorer: {entry['dir']}/ is current ({len(fresh)} files rebuilt identically)")
    return True


def rebuild(bundle: Path, log: Any = print) -> int:
    """Rewrite explorer/ of a bundle whose other files are intact; 0 on success."""
    from memeval.evaluation.bundle.manifest import MANIFEST, check_files, file_hashes, load_manifest
    from memeval.harness.versions import git

    manifest = load_manifest(bundle)
    problems = [p for p in check_files(bundle, manifest) if not p.split(": ", 1)[-1].startswith(f"{EXPLORER}/")]
    if problems:
        log(f"FAIL not rebuilt: the bundle's other files do not match its manifest ({problems[0]})")
        return 1
    matrix = (manifest.get("judge_matrix") or {}).get("json")
    rels = [r["path"] for r in manifest["runs"]]
    entry = write(bundle, rels, Path(matrix) if matrix else None)
    files = {k: v for k, v in manifest["files"].items() if not k.startswith(f"{EXPLORER}/")}
    files.update({f"{EXPLORER}/{rel}": digest for rel, digest in file_hashes(bundle / EXPLORER).items()})
    manifest["explorer"] = {**entry, "rebuilt_at_commit": git("rev-parse", "HEAD")}
    manifest["files"] = dict(sorted(files.items()))
    (bundle / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in (bundle / EXPLORER).rglob("*") if p.is_file())
    log(f"explorer: {bundle / EXPLORER} rebuilt ({entry['files']} files, {size / 1e6:.1f} MB); manifest updated")
    return 0
