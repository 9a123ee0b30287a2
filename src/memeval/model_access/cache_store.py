"""A model-call cache many workers can share: one file per key in a content-addressed folder.

Why a folder and not Redis: every cluster this framework targets (SLURM nodes, a Ray cluster on
one NFS/Lustre home, a laptop) already has a shared filesystem, and a folder needs no server to
run, secure or back up; `rsync` and `memeval cache export|import` move it. Each
value is written to a private temporary file in the same folder tree and renamed into place
(rename is atomic on POSIX filesystems, NFS included), so a reader sees either nothing or a whole
entry, and concurrent writers of one key never corrupt it (the last rename wins; both wrote a
valid reply to the same request). SQLite stays the default for one machine (one file, fast).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .cache import CacheBase, ResponseCache
from .errors import ConfigError

BACKENDS = ("sqlite", "directory")


class DirectoryCache(CacheBase):
    """`root/ab/cd/<sha256 key>.json`, written atomically; safe for many processes and nodes."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "tmp").mkdir(exist_ok=True)
        self.identity = str(self.root.resolve())

    def _path(self, key: str) -> Path:
        if len(key) < 8 or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"cache keys are lowercase hex digests, not {key[:40]!r}")
        return self.root / key[:2] / key[2:4] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            raw = self._path(key).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            return json.loads(raw)
        except ValueError:  # only a foreign or damaged file can be partial: treat as a miss
            return None

    def put(self, key: str, value: dict[str, Any]) -> None:
        target = self._path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.root / "tmp" / f"{key}.{os.getpid()}.{uuid.uuid4().hex}"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(value, fh, ensure_ascii=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)

    def items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for path in sorted(self.root.glob("??/??/*.json")):
            value = self.get(path.stem)
            if value is not None:
                yield path.stem, value

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("??/??/*.json"))


def open_cache(path: str | Path | None, backend: str = "sqlite") -> CacheBase:
    """The configured backend (`cache_backend` in conf/config.yaml) at `cache_path`."""
    if backend not in BACKENDS:
        raise ConfigError(f"cache_backend must be one of {list(BACKENDS)}, not {backend!r}")
    if path is None:
        return ResponseCache(None)
    if backend == "directory":
        if Path(path).is_file():
            raise ConfigError(f"cache_backend=directory needs a folder, but cache_path={path} is a "
                              "file (an SQLite cache?); set cache_path to a folder on the shared filesystem")
        return DirectoryCache(path)
    if Path(path).is_dir():
        raise ConfigError(f"cache_path={path} is a folder: use cache_backend=directory, or point "
                          "cache_path at an SQLite file")
    return ResponseCache(path)


def open_any(path: str | Path) -> CacheBase:
    """Open an existing cache of either kind, by what is at `path` (a folder or a file)."""
    return open_cache(path, "directory" if Path(path).is_dir() else "sqlite")
