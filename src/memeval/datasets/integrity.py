"""Known sha256 of every benchmark file, and the check that refuses a file that differs.

Each loader class declares its own files (`data_files`, hashes from ../shared/data/SOURCES.md);
the data step (scripts/fetch_data.py) collects them through the plugin registry (`manifests`),
and a loader checks its files against its own list.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memeval.model_access.errors import ConfigError


@dataclass(frozen=True)
class DataFile:
    path: str
    sha256: str | None  # None: no reference hash exists (the file is reported as unverified)
    status: str  # original | reconstructed | unverified | derived
    url: str | None = None
    optional: bool = False  # the data step may lack it (no download source); its reader says so


def manifests() -> dict[str, tuple[DataFile, ...]]:
    """dataset plugin name -> the files its loader class declares (`data_files`), for every
    registered dataset plugin (a loader without data files, such as a user's own, declares none)."""
    # imported here: the loaders import this module, so loading them at import time is a cycle
    from memeval.plugins import registered

    return {name: tuple(getattr(p.load(), "data_files", ())) for name, p in registered("dataset").items()}


def manifest() -> dict[str, DataFile]:
    """path -> DataFile over every registered loader's files."""
    return {f.path: f for files in manifests().values() for f in files}


_STAMP = ".verified.json"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(root: Path, rel: str, files: Iterable[DataFile] | None = None) -> DataFile:
    """Check one file against its loader's `files` (default: every registered loader's manifest);
    remember good (size, mtime) to skip rehashing."""
    entry = {f.path: f for f in files}.get(rel) if files is not None else manifest().get(rel)
    path = root / rel
    if not path.exists():
        raise ConfigError(
            f"Benchmark file missing: {path}. Run `python scripts/fetch_data.py` (copies from "
            f"../shared/data or downloads from the official source) or set data_dir=... ."
        )
    if entry is None or entry.sha256 is None:
        return entry or DataFile(rel, None, "unverified")
    stamp_path = path.parent / _STAMP
    stamps = json.loads(stamp_path.read_text()) if stamp_path.exists() else {}
    st = path.stat()
    sig = [st.st_size, st.st_mtime_ns, entry.sha256]
    if stamps.get(path.name) == sig:
        return entry
    actual = sha256_of(path)
    if actual != entry.sha256:
        raise ConfigError(
            f"Checksum mismatch for {path}: expected sha256 {entry.sha256}, got {actual}. "
            "The file is corrupt or a different version; delete it and rerun "
            "`python scripts/fetch_data.py`."
        )
    stamps[path.name] = sig
    with contextlib.suppress(OSError):  # a read-only data folder: verification still happened
        stamp_path.write_text(json.dumps(stamps))
    return entry
