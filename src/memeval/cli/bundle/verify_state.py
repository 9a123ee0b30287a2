"""Which runs a `bundle verify` replays: the `--run` selection and the record of runs already verified.

A verify of a large bundle takes many minutes (a baseline's replay alone can take several), so an
interrupted verify must not start over: each run that replays OK is recorded in a state file keyed
by the sha256 of the bundle's manifest.json (which hashes every file, calls included) and the run's
path, with the memeval commit that verified it. A rerun skips those runs while the manifest and the
commit are unchanged; failures are never recorded, so they are always replayed again.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memeval.evaluation.bundle.manifest import MANIFEST

STATE_FORMAT = 1
EXPLORER_KEY = "(explorer)"  # the explorer check's own entry beside the runs'


def run_names(entry: dict[str, Any]) -> list[str]:
    """The names a `--run` pattern may match: the bundle path, dataset/folder, folder, method."""
    path = str(entry["path"])
    parts = path.split("/")
    return [path, "/".join(parts[-2:]), parts[-1], str(entry.get("method") or "")]


def select_runs(runs: list[dict[str, Any]], patterns: list[str] | None) -> tuple[list[int], list[str]]:
    """Indices of the manifest's runs matching any pattern (all without patterns), and the
    patterns that matched none (an error for the caller: a typo must not verify nothing)."""
    if not patterns:
        return list(range(len(runs))), []
    chosen = [i for i, e in enumerate(runs)
              if any(fnmatch.fnmatchcase(n, p) for p in patterns for n in run_names(e) if n)]
    unmatched = [p for p in patterns
                 if not any(fnmatch.fnmatchcase(n, p) for e in runs for n in run_names(e) if n)]
    return chosen, unmatched


def manifest_digest(bundle: Path) -> str:
    return hashlib.sha256((bundle / MANIFEST).read_bytes()).hexdigest()


@dataclass
class VerifyState:
    """The runs of one bundle (one manifest) verified OK so far, read from and written to `path`."""

    path: Path | None  # None: nothing is recorded (a library call that asked for no resume)
    manifest_sha256: str
    commit: str | None
    done: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def open(cls, folder: Path | None, bundle: Path, commit: str | None, fresh: bool = False) -> VerifyState:
        digest = manifest_digest(bundle)
        state = cls(folder / f"verify-{digest[:16]}.json" if folder else None, digest, commit)
        if fresh or state.path is None or not state.path.is_file():
            return state
        try:
            saved = json.loads(state.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return state  # a torn or foreign file: verify everything again
        if saved.get("format") == STATE_FORMAT and saved.get("manifest_sha256") == digest:
            state.done = {k: v for k, v in (saved.get("runs") or {}).items() if isinstance(v, dict)}
        return state

    def verified(self, key: str) -> dict[str, Any] | None:
        """The record of `key` verified OK by this same commit of memeval, else None."""
        rec = self.done.get(key)
        return rec if rec and rec.get("ok") and rec.get("commit") == self.commit else None

    def stale(self, keys: list[str]) -> int:
        """How many of `keys` were verified OK, but by another commit (so they are replayed again)."""
        return sum(1 for k in keys if (r := self.done.get(k)) and r.get("ok") and r.get("commit") != self.commit)

    def record(self, key: str, seconds: float, calls: int) -> None:
        """Note `key` verified OK now; written at once (atomically), so Ctrl-C right after keeps it."""
        self.done[key] = {"ok": True, "at": time.strftime("%Y-%m-%d %H:%M:%S"), "seconds": round(seconds, 1),
                          "calls": calls, "commit": self.commit}
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        body = {"format": STATE_FORMAT, "manifest_sha256": self.manifest_sha256, "runs": self.done}
        tmp.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
        tmp.replace(self.path)
