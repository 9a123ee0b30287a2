"""The egress guard a baseline worker starts with (methods/external/workers/egress_guard/): every
non-loopback connection and name lookup is refused and recorded, loopback works. No package
environment needed: the guard is standard library, tried here with the framework's Python."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from methods.external.base import EGRESS_GUARD, EGRESS_LOG_ENV, egress_attempts

PROBE = """
import socket, urllib.request, asyncio
out = {}
try:
    socket.socket().connect(("203.0.113.7", 443))
    out["ip"] = "connected"
except OSError as exc:
    out["ip"] = type(exc).__name__
try:
    socket.create_connection(("telemetry.example.com", 443), timeout=2)
    out["name"] = "connected"
except OSError as exc:
    out["name"] = type(exc).__name__
async def via_asyncio():
    try:
        await asyncio.wait_for(asyncio.open_connection("198.51.100.9", 80), 2)
        return "connected"
    except OSError as exc:
        return type(exc).__name__
out["asyncio"] = asyncio.run(via_asyncio())
req = urllib.request.Request(URL, data=b'{"model": "m", "input": ["x"]}', method="POST",
                             headers={"Content-Type": "application/json"})
out["loopback"] = urllib.request.urlopen(req, timeout=10).status
print(out)
"""


def test_guard_refuses_and_records_outbound_and_lets_loopback_through(scripted, tmp_path) -> None:
    log = tmp_path / "egress.jsonl"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(EGRESS_GUARD), EGRESS_LOG_ENV: str(log)}
    res = subprocess.run([sys.executable, "-c", PROBE.replace("URL", repr(scripted.base_url + "/embeddings"))],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    out = eval(res.stdout.strip())  # noqa: S307 - our own probe's printed dict
    assert out == {"ip": "ConnectionRefusedError", "name": "gaierror", "asyncio": "ConnectionRefusedError",
                   "loopback": 200}, out
    rows = [json.loads(x) for x in log.read_text().splitlines()]
    assert {(r["kind"], r["host"]) for r in rows} == {("connect", "203.0.113.7"), ("getaddrinfo", "telemetry.example.com"),
                                                      ("connect", "198.51.100.9")}
    assert egress_attempts(log) == 3 and egress_attempts(tmp_path / "none.jsonl") == 0


def test_guard_is_inert_without_its_log_variable(tmp_path) -> None:
    """Only a worker the harness starts with MEMEVAL_EGRESS_LOG is guarded."""
    code = "import socket; print(socket.socket.connect.__name__)"
    res = subprocess.run([sys.executable, "-c", code], env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(EGRESS_GUARD)},
                         capture_output=True, text=True, timeout=60)
    assert res.stdout.strip() == "connect"
    assert Path(EGRESS_GUARD, "sitecustomize.py").exists()
