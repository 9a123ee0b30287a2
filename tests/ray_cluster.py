"""A local Ray cluster for tests: a head and one more raylet on this machine, 1 CPU each.

Started with the Ray environment's own `ray start --block` (harness/ray_env.py), each node in its
own session, so stopping it signals only the processes it started (never `ray stop`, which kills
every Ray process of the user). Ray will not bind a node to 127.0.0.1 (it replaces a loopback
--node-ip-address by the machine's address and listens on all interfaces), so the cluster requires
a token (RAY_AUTH_MODE=token, a fresh 256-bit RAY_AUTH_TOKEN that only the test's processes hold).
The object store is Ray's minimum (75 MiB); usage stats are off.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

OBJECT_STORE_BYTES = 78643200  # Ray's minimum
STARTED = "Ray runtime started"
ADDRESS = re.compile(r"ray start --address='([^']+)'")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalRayCluster:
    """`with LocalRayCluster(env) as c:` then run drivers with `env=c.env`, `address=c.address`."""

    def __init__(self, ray_env: Path, start_timeout_s: float = 240.0, attempts: int = 3) -> None:
        self.ray = str(ray_env / "bin" / "ray")
        self.start_timeout_s = start_timeout_s
        self.attempts = attempts
        # short: Ray's socket paths must fit in 107 bytes
        self.temp = Path(tempfile.mkdtemp(prefix="rayt", dir="/tmp"))
        self.env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token",
                    "RAY_AUTH_TOKEN": secrets.token_hex(32)}
        self.env.pop("RAY_ADDRESS", None)
        self.nodes: list[tuple[subprocess.Popen, Path]] = []
        self.address = ""

    def _start(self, name: str, args: Callable[[], list[str]]) -> str:
        """Start one node and wait until it has registered with the head; returns its log.

        A node that times out while starting is started again (at most `attempts` times): on a
        loaded 2-core machine Ray's own 15-30 s waits for its agents and the GCS can run out."""
        failures = []
        for attempt in range(1, self.attempts + 1):
            text = self._start_once(f"{name}{attempt}", *args())
            if STARTED in text:
                return text
            failures.append(f"--- {name}, attempt {attempt}:\n{text[-2500:]}")
        raise RuntimeError(f"Ray {name} did not start in {self.attempts} attempts:\n" + "\n".join(failures))

    def _start_once(self, name: str, *args: str) -> str:
        log = self.temp / f"{name}.log"
        with open(log, "w") as fh:
            proc = subprocess.Popen([self.ray, "start", "--block", "--num-cpus=1",
                                     f"--object-store-memory={OBJECT_STORE_BYTES}",
                                     "--disable-usage-stats", f"--temp-dir={self.temp / name}", *args],
                                    env=self.env, stdout=fh, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        deadline = time.monotonic() + self.start_timeout_s
        while STARTED not in (text := log.read_text(errors="replace")):
            if proc.poll() is not None or time.monotonic() > deadline:
                _kill_group(proc)  # what a failed start left behind (its agents outlive it)
                return text
            time.sleep(0.5)
        self.nodes.append((proc, log))
        return text

    def __enter__(self) -> LocalRayCluster:
        try:
            # no autoscaler (the cluster is fixed) and one log monitor for the machine, as Ray asks
            head = self._start("head", lambda: ["--head", f"--port={_free_port()}",
                                                "--include-dashboard=false", "--no-monitor"])
            found = ADDRESS.search(head)
            assert found, head[-2000:]
            self.address = found[1]
            self._start("worker", lambda: [f"--address={self.address}", "--include-log-monitor=false"])
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def stop(self, grace_s: float = 45.0) -> None:
        """SIGTERM each node's session (Ray drains for up to 30 s), then SIGKILL what is left."""
        for proc, _ in reversed(self.nodes):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for proc, _ in self.nodes:
            while time.monotonic() < deadline and _group_alive(proc):
                time.sleep(0.5)
            _kill_group(proc)
        self.nodes.clear()
        shutil.rmtree(self.temp, ignore_errors=True)

    def logs(self) -> str:
        """The nodes' `ray start` output, for a failing test's message."""
        return "\n".join(f"--- {log.name}\n" + log.read_text(errors="replace")[-2000:]
                         for log in sorted(self.temp.glob("*.log")))


def _group_alive(proc: subprocess.Popen) -> bool:
    proc.poll()  # reap the `ray start` process itself once it exits
    try:
        os.killpg(proc.pid, 0)
    except ProcessLookupError:
        return False
    return True


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # the node's own session: only what it started
    proc.wait(timeout=30)
