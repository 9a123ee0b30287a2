"""Content-addressed persistent cache around every model call.

The key hashes everything that can change a response (model identity, messages, every sampling
parameter, response format), so a rerun of a finished experiment makes no model call at all, and
an interrupted run loses nothing that was already paid for: each response is written as it arrives.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import CacheDamaged
from .inflight import KeyLocks, default_lock_root

log = logging.getLogger(__name__)
DAMAGE_CODES = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB: the file itself is damaged


def damaged(exc: sqlite3.Error) -> bool:
    """Whether an SQLite error means a damaged file (not a lock or a busy database)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in DAMAGE_CODES:
        return True
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def cache_key(payload: dict[str, Any]) -> str:
    """Stable sha256 of a JSON-serialisable request description."""
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CacheBase:
    """What every backend shares: node-local in-flight locks and a content digest for export."""

    identity: str = ""
    _locks: KeyLocks | None = None

    def inflight(self, key: str) -> contextlib.AbstractAsyncContextManager[None]:
        """Hold while paying for `key`: a second caller on this node waits, then hits the cache."""
        if self._locks is None:
            self._locks = KeyLocks(default_lock_root(self.identity))
        return self._locks.hold(key)

    def get(self, key: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def put(self, key: str, value: dict[str, Any]) -> None:
        raise NotImplementedError

    def items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        raise NotImplementedError

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def close(self) -> None:
        return None


class ResponseCache(CacheBase):
    """SQLite key/value store (WAL mode, one writer lock): the default for one machine."""

    def __init__(self, path: str | Path | None):
        self.path = Path(path) if path else None
        self._lock = threading.Lock()
        self._mem: dict[str, str] = {}
        self._db: sqlite3.Connection | None = None
        self.identity = str(self.path.resolve()) if self.path else f"memory-{os.getpid()}-{id(self)}"
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=60)
            try:
                self._init_file()
            except BaseException:
                self._db.close()
                raise

    def _init_file(self) -> None:
        assert self._db is not None
        # Switching a new file to WAL does not wait on the busy timeout: parallel sweep jobs
        # opening one fresh cache at once failed with "database is locked". One at a time.
        with self._reading(), open(f"{self.path}.init-lock", "a") as guard:
            fcntl.flock(guard, fcntl.LOCK_EX)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            self._db.commit()

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """A damaged file raises CacheDamaged, which names the file and the fix (`memeval cache
        check`), instead of SQLite's own error, which names neither."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if not damaged(exc):
                raise
            raise CacheDamaged(self.path, str(exc)) from None

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock, self._reading():
            if self._db is None:
                raw = self._mem.get(key)
            else:
                try:
                    row = self._db.execute("SELECT value FROM responses WHERE key=?", (key,)).fetchone()
                except sqlite3.OperationalError as exc:  # a value that is not UTF-8 text
                    if "decode" not in str(exc).lower():
                        raise
                    self._bad_entry(key, "not UTF-8 text")
                    return None
                raw = row[0] if row else None
        try:
            return json.loads(raw) if raw is not None else None
        except ValueError:
            self._bad_entry(key, "not JSON")
            return None

    def _bad_entry(self, key: str, why: str) -> None:
        """An entry that cannot be read is a miss, as in the directory backend: the call is made
        again and its reply replaces the entry; the log names the fix."""
        log.warning("cache entry %s in %s is %s: treated as uncached; `memeval cache check --cache %s` "
                    "sets such entries aside", key[:16], self.path, why, self.path)

    def put(self, key: str, value: dict[str, Any]) -> None:
        raw = json.dumps(value, ensure_ascii=False)
        with self._lock, self._reading():
            if self._db is None:
                self._mem[key] = raw
            else:
                self._db.execute(
                    "INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)", (key, raw)
                )
                self._db.commit()

    def items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every (key, value), in key order (a stable export); an unreadable entry raises
        CacheDamaged rather than being left out of an export unsaid."""
        with self._lock, self._reading():
            if self._db is None:
                rows = sorted(self._mem.items())
            else:
                try:
                    rows = self._db.execute("SELECT key, value FROM responses ORDER BY key").fetchall()
                except sqlite3.OperationalError as exc:
                    if "decode" not in str(exc).lower():
                        raise
                    raise CacheDamaged(self.path, "an entry is not UTF-8 text") from None
        for key, raw in rows:
            try:
                value = json.loads(raw)
            except ValueError:
                raise CacheDamaged(self.path, f"entry {key[:16]} is not JSON") from None
            yield key, value

    def __len__(self) -> int:
        with self._lock, self._reading():
            if self._db is None:
                return len(self._mem)
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

