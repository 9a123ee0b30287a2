"""One line for a path that is not the run folder a command needs (missing, a bundle, a folder
of runs, anything else), so `memeval report|compare|rescore|health` never answers a typo with
advice that fails next (rescoring a folder that does not exist) or a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

from .folder import artifact

# a result bundle's manifest (evaluation/bundle/manifest.py MANIFEST and FORMAT; that layer is above this one)
BUNDLE_MANIFEST = "manifest.json"
BUNDLE_FORMAT = "memeval-bundle/"
HOLDS = ("a run folder (runs/<dataset>/<method>-<hash>) holds config.yaml and meta.json from the moment "
         "`memeval run` starts, then predictions.jsonl, judgments.jsonl and metrics.json as its stages finish")


def _is_run(path: Path) -> bool:
    return (path / "config.yaml").is_file()  # the first file a run writes (meta.json follows)


def _is_bundle(path: Path) -> bool:
    manifest = path / BUNDLE_MANIFEST
    if not manifest.is_file():
        return False
    try:
        return str(json.loads(manifest.read_text(encoding="utf-8")).get("format", "")).startswith(BUNDLE_FORMAT)
    except (ValueError, OSError, AttributeError):
        return False


def _runs_below(path: Path) -> list[str]:
    """Glob patterns naming the run folders one or two levels below `path` (runs/<dataset>/<run>)."""
    subs = sorted(p for p in path.iterdir() if p.is_dir()) if path.is_dir() else []
    if any(_is_run(p) for p in subs):
        return [f"{path}/*"]
    return [f"{p}/*" for p in subs if any(_is_run(q) for q in p.iterdir() if q.is_dir())]


def folder_problem(path: Path, command: str, need: str = "metrics.json") -> str | None:
    """Why `path` is not a run folder `memeval COMMAND` can read (None: it is one, holding
    `need` at least). The caller prints "error: " + this and exits 2."""
    path = Path(path)
    if not path.exists():
        return f"no such folder: {path}"
    if not path.is_dir():
        return f"{path} is a file, not a run folder: {HOLDS}"
    if _is_bundle(path):
        runs = _runs_below(path / "runs")
        example = f"`memeval {command} {runs[0]}`" if runs else f"`memeval {command} {path}/runs/<dataset>/*`"
        if command == "rescore":  # a bundle's files are its manifest's: rescoring there would change them
            return (f"{path} is a result bundle, not a run folder: its runs (under {path}/runs/<dataset>/) are "
                    f"scored already, and `memeval bundle verify {path}` rescores them against their files; "
                    "to rescore one, copy its folder out of the bundle first")
        return (f"{path} is a result bundle, not a run folder: its runs are under {path}/runs/<dataset>/; "
                f"name them, e.g. {example} (`memeval bundle verify {path}` checks the bundle itself)")
    if not _is_run(path):
        runs = _runs_below(path)
        if runs:
            return f"{path} holds run folders but is not one; name them, e.g. `memeval {command} {runs[0]}`"
        return f"{path} is not a run folder: {HOLDS}"
    if artifact(path / need).exists():
        return None
    if need == "metrics.json" and artifact(path / "judgments.jsonl").exists():
        return f"{path} is not scored yet (no metrics.json): `memeval rescore {path}` scores it (no model call)"
    return (f"{path} has no {'judgments.jsonl' if need == 'metrics.json' else need}: the run stopped before its "
            "judge stage; rerun the same `memeval run` command to finish it (cached calls are free)")
