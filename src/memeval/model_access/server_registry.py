"""Jobs of a sweep on one machine share one llama.cpp server per model spec.

A parallel launcher (joblib, or several SLURM tasks on one node) runs jobs in separate
processes; without coordination each would start its own server for the same model and the
machine's cores and RAM would be split between copies. The registry is a JSON file per spec
under a lock file (`flock`) in a node-local folder: the first job starts the server and becomes
its owner; later jobs find it alive and healthy and use its base_url. A job records itself as a
user while it runs; the owner keeps its server (and so its own process) alive until no other live
process uses it. A dead owner or a server that fails its health check is replaced by the next
job that asks. Never used for remote endpoints (`llm=openai_compatible` already shares one).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def http_healthy(base_url: str) -> bool:
    """llama-server's /health (one level above /v1) answers 200 when it is ready."""
    url = base_url.rsplit("/v1", 1)[0] + "/health"
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def spec_key(spec: Any) -> str:
    raw = repr(spec.key() if hasattr(spec, "key") else spec)
    return hashlib.sha256(raw.encode()).hexdigest()[:20]


class NodeServers:
    """The per-node registry; `acquire` returns a base_url, `release` ends this job's use."""

    def __init__(self, root: Path | None = None, healthy: Callable[[str], bool] = http_healthy,
                 poll_s: float = 0.5):
        default = Path(os.environ.get("MEMEVAL_LOCK_DIR") or tempfile.gettempdir()) / "memeval-servers"
        self.root = Path(root) if root else default
        self.root.mkdir(parents=True, exist_ok=True)
        self.healthy = healthy
        self.poll_s = poll_s
        self._owned: set[str] = set()
        self._exit_hook = False

    @contextlib.contextmanager
    def _locked(self, key: str) -> Iterator[Path]:
        with open(self.root / f"{key}.lock", "a+") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield self.root / f"{key}.json"
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    @staticmethod
    def _load(path: Path) -> dict[str, Any] | None:
        try:
            return json.loads(path.read_text())
        except (FileNotFoundError, ValueError):
            return None

    @staticmethod
    def _save(path: Path, entry: dict[str, Any]) -> None:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(entry))
        tmp.replace(path)

    def acquire(self, key: str, start: Callable[[], str]) -> str:
        """The live server's base_url for `key`, starting it (under the lock) if there is none."""
        me = os.getpid()
        with self._locked(key) as path:
            entry = self._load(path)
            if entry and pid_alive(entry["owner"]) and self.healthy(entry["base_url"]):
                entry["users"] = sorted({p for p in entry["users"] if pid_alive(p)} | {me})
                self._save(path, entry)
                return entry["base_url"]
            base_url = start()
            self._save(path, {"base_url": base_url, "owner": me, "users": [me]})
        self._owned.add(key)
        if not self._exit_hook:  # runs before the server pool's own atexit close (LIFO)
            atexit.register(self.wait_for_users)
            self._exit_hook = True
        return base_url

    def release(self, key: str) -> None:
        """This process no longer uses the server (an owner keeps serving the others)."""
        me = os.getpid()
        with self._locked(key) as path:
            entry = self._load(path)
            if entry:
                entry["users"] = [p for p in entry["users"] if p != me and pid_alive(p)]
                self._save(path, entry)

    def other_users(self, key: str) -> list[int]:
        with self._locked(key) as path:
            entry = self._load(path) or {"users": []}
        return [p for p in entry["users"] if p != os.getpid() and pid_alive(p)]

    def wait_for_users(self, timeout_s: float | None = None) -> None:
        """Before an owner exits (and its servers stop): wait until nobody else uses them."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        for key in sorted(self._owned):
            while self.other_users(key) and (deadline is None or time.monotonic() < deadline):
                time.sleep(self.poll_s)
            with self._locked(key) as path:
                entry = self._load(path)
                if entry and entry.get("owner") == os.getpid():
                    path.unlink(missing_ok=True)
        self._owned.clear()
