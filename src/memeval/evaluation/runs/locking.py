"""Exclusive folder locks, so two runs never write one run folder or one index folder at once.

The lock is an `flock` on `<folder>/.lock`: the kernel releases it when the holder exits for any
reason (a `kill -9` included), so a crashed run never leaves a stale lock behind. The file records
the holder's pid, host and start time for the message a second run prints.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from memeval.model_access.errors import ConfigError

LOCK_NAME = ".lock"


class FolderBusyError(ConfigError):
    """Another live process holds the folder's lock."""


class FolderLock:
    """Hold an exclusive lock on a folder for the life of a `with` block (or until release())."""

    def __init__(self, folder: Path, what: str = "folder", wait_s: float = 0.0, poll_s: float = 0.2):
        self.folder = Path(folder)
        self.what = what
        self.wait_s = wait_s
        self.poll_s = poll_s
        self._fd: int | None = None

    @property
    def path(self) -> Path:
        return self.folder / LOCK_NAME

    def holder(self) -> dict[str, Any]:
        """Who holds (or last held) the lock, as its holder wrote it; {} when unreadable."""
        try:
            return json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError):
            return {}

    def acquire(self) -> FolderLock:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + max(0.0, self.wait_s)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise FolderBusyError(self._busy_message()) from None
                time.sleep(self.poll_s)
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        self._fd = fd
        return self

    def _busy_message(self) -> str:
        h = self.holder()
        who = f"pid {h.get('pid', '?')} on {h.get('host', '?')}, since {h.get('since', '?')}"
        waited = f" (waited {self.wait_s:g} s)" if self.wait_s > 0 else ""
        return (f"The {self.what} {self.folder} is in use by another run ({who}){waited}. Wait for "
                "it to finish, or pass lock_wait_s=SECONDS to wait for it; two runs writing one "
                "folder at once would interleave their files.")

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> FolderLock:
        return self.acquire() if self._fd is None else self

    def __exit__(self, *exc: object) -> None:
        self.release()
