"""In-flight deduplication: one lock file per cache key, so a call is paid once per node at a time.

Two jobs (processes) or two coroutines that need the same uncached call take the key's lock; the
first pays for the call and writes the cache, the second wakes up, re-reads the cache and finds a
hit. Locks are `flock` on node-local files (never on a shared filesystem, where flock semantics
vary): the lock file is removed by its holder on release, and a waiter that locked a file already
unlinked retries on the fresh one, so no lock files accumulate.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no cross-process dedup
    fcntl = None  # type: ignore[assignment]


def default_lock_root(cache_identity: str) -> Path:
    """Node-local folder for one cache's key locks ($MEMEVAL_LOCK_DIR overrides the temp dir)."""
    base = Path(os.environ.get("MEMEVAL_LOCK_DIR") or tempfile.gettempdir())
    tag = hashlib.sha256(cache_identity.encode()).hexdigest()[:16]
    return base / f"memeval-inflight-{os.getuid() if hasattr(os, 'getuid') else 0}" / tag


class KeyLocks:
    """Async exclusive locks per key, valid across processes and coroutines of one machine."""

    def __init__(self, root: Path, poll_s: float = 0.02, max_poll_s: float = 0.5):
        self.root = Path(root)
        self.poll_s = poll_s
        self.max_poll_s = max_poll_s

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.lock"

    def _try_lock(self, path: Path) -> int | None:
        """The locked fd when this caller now holds the (current) lock file, else None."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        try:  # the holder before us may have unlinked this file: then it is no lock at all
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)
        return None

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        if fcntl is None:
            yield
            return
        path = self._path(key)
        delay = self.poll_s
        while (fd := self._try_lock(path)) is None:
            await asyncio.sleep(delay)
            delay = min(self.max_poll_s, delay * 1.5)
        try:
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            os.close(fd)  # closing releases the flock
