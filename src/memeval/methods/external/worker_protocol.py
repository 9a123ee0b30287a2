"""The framework side of the worker protocol: one long-lived process per baseline index.

A worker runs inside its baseline's own environment and speaks JSON lines: the framework writes
`{"id", "op", "payload"}` to its stdin, the worker answers each with one line on its stdout,
`{"id", "ok": true, "result", "seconds"}` or `{"id", "ok": false, "error", "traceback"}`.
Everything else the package prints goes to a log file next to the index. The worker indexes
once and then answers many questions, and exits by itself when its stdin closes, so a dead
framework never leaves a worker behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import selectors
import signal
import subprocess
import threading
import time
import weakref
from pathlib import Path
from typing import Any


class WorkerError(RuntimeError):
    """A worker job failed; the message carries the worker's own traceback and its log's tail."""

    def __init__(self, message: str, worker_traceback: str = "", log_path: Path | None = None):
        super().__init__(message)
        self.worker_traceback = worker_traceback
        self.log_path = log_path


def _log_tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


def _stop(proc: subprocess.Popen, grace_s: float = 10.0) -> None:
    """Close stdin (the worker's signal to exit), then escalate on its own process group only."""
    if proc.poll() is not None:
        return
    try:
        if proc.stdin and not proc.stdin.closed:
            proc.stdin.close()
        proc.wait(timeout=grace_s)
        return
    except (OSError, subprocess.TimeoutExpired):
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=5)
            return
        except (ProcessLookupError, subprocess.TimeoutExpired, PermissionError):
            continue


class WorkerClient:
    """Start a worker script with a given interpreter and talk to it one job at a time."""

    def __init__(self, name: str, python: Path, script: Path, env: dict[str, str], cwd: Path,
                 log_path: Path):
        self.name = name
        self.python = python
        self.script = script
        self.env = env
        self.cwd = cwd
        self.log_path = log_path
        self._proc: subprocess.Popen | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._finalizer: weakref.finalize | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self) -> None:
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "a", encoding="utf-8")  # noqa: SIM115 - owned by the child
        log.write(f"\n===== {time.strftime('%Y-%m-%d %H:%M:%S')} start {self.name} worker\n")
        log.flush()
        self._proc = subprocess.Popen(
            [str(self.python), str(self.script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=log, cwd=self.cwd, env=self.env, start_new_session=True)
        log.close()
        self._finalizer = weakref.finalize(self, _stop, self._proc)

    def call(self, op: str, payload: dict[str, Any] | None = None,
             timeout_s: float | None = None) -> dict[str, Any]:
        """Send one job and wait for its reply; raise WorkerError if it fails or the worker dies."""
        with self._lock:
            if self._proc is None:
                self.start()
            proc = self._proc
            assert proc is not None and proc.stdin is not None and proc.stdout is not None
            if proc.poll() is not None:
                raise self._died(op, proc)
            job_id = next(self._ids)
            line = json.dumps({"id": job_id, "op": op, "payload": payload or {}}, ensure_ascii=False)
            try:
                proc.stdin.write((line + "\n").encode("utf-8"))
                proc.stdin.flush()
            except (BrokenPipeError, OSError):
                raise self._died(op, proc) from None
            reply = self._read_reply(proc, job_id, op, timeout_s)
        if not reply.get("ok"):
            tb = reply.get("traceback", "")
            raise WorkerError(
                f"{self.name} worker failed in '{op}': {reply.get('error')}\n"
                f"--- worker traceback ---\n{tb}--- worker log: {self.log_path}",
                worker_traceback=tb, log_path=self.log_path)
        return reply

    def _read_reply(self, proc: subprocess.Popen, job_id: int, op: str,
                    timeout_s: float | None) -> dict[str, Any]:
        assert proc.stdout is not None
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while True:
                wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not sel.select(wait):
                    _stop(proc, grace_s=1.0)
                    raise WorkerError(f"{self.name} worker took longer than {timeout_s}s on '{op}' "
                                      f"and was stopped; log: {self.log_path}\n{_log_tail(self.log_path)}",
                                      log_path=self.log_path)
                raw = proc.stdout.readline()
                if not raw:
                    proc.wait(timeout=10)
                    raise self._died(op, proc)
                try:
                    reply = json.loads(raw)
                except ValueError:
                    continue  # not a protocol line (should not happen: stdout is redirected)
                if reply.get("id") == job_id:
                    return reply

    def _died(self, op: str, proc: subprocess.Popen) -> WorkerError:
        return WorkerError(f"{self.name} worker exited (code {proc.poll()}) during '{op}'; "
                           f"log: {self.log_path}\n--- log tail ---\n{_log_tail(self.log_path)}",
                           log_path=self.log_path)

    async def acall(self, op: str, payload: dict[str, Any] | None = None,
                    timeout_s: float | None = None) -> dict[str, Any]:
        """`call` on a daemon thread, so the loop keeps serving while the worker works.

        Not asyncio.to_thread: a run that is interrupted must not wait at exit for a job that
        may take hours; the finalizer then stops the worker. A cancelled job stops the worker
        too (it would otherwise go on working on a job nobody waits for).
        """
        loop = asyncio.get_running_loop()
        fut: asyncio.Future = loop.create_future()

        def deliver(setter: str, value: Any) -> None:
            if not fut.done():
                getattr(fut, setter)(value)

        def work() -> None:
            try:
                result = self.call(op, payload, timeout_s)
            except BaseException as exc:  # handed to the awaiting task
                outcome: tuple[str, Any] = ("set_exception", exc)
            else:
                outcome = ("set_result", result)
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
                loop.call_soon_threadsafe(deliver, *outcome)

        threading.Thread(target=work, name=f"{self.name}-{op}", daemon=True).start()
        try:
            return await fut
        except asyncio.CancelledError:
            self.close()
            raise

    def close(self) -> None:
        """Stop the worker: end of input first (it exits between jobs), then its process group."""
        if self._proc is None:
            return
        _stop(self._proc)
        if self._finalizer is not None:
            self._finalizer.detach()
