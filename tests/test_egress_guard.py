"""The egress guard every baseline worker runs under (methods/external/workers/egress_guard/).

A child Python started with the harness's worker environment (`envs.worker_env`) must reach
loopback and nothing else: each refused attempt raises in the child and is recorded in the log the
harness names. The targets are TEST-NET-1 (192.0.2.0/24, never routed) and the reserved .invalid
domain, and the guard refuses them before any packet or DNS query is sent.
The same environment fixes the string-hash seed, so set iteration order is one in every worker.
"""

from __future__ import annotations

import errno
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from memeval.methods.external import envs

CHILD = textwrap.dedent("""
    import asyncio, json, socket, sys, urllib.request
    import sitecustomize
    out = {"guard": sitecustomize.GUARD_ACTIVE}
    server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(1)
    local = socket.create_connection(server.getsockname(), timeout=5); local.close()
    out["loopback"] = "ok"
    out["localhost"] = len(socket.getaddrinfo("localhost", 80)) > 0
    def attempt(name, fn):
        try:
            fn()
            out[name] = "connected"
        except OSError as exc:
            out[name] = type(exc).__name__ + ": " + str(exc)[:80]
    attempt("connect", lambda: socket.socket().connect(("192.0.2.1", 9)))
    out["connect_ex"] = socket.socket().connect_ex(("192.0.2.1", 9))
    attempt("resolve", lambda: socket.getaddrinfo("memeval-egress-test.invalid", 443))
    attempt("urllib", lambda: urllib.request.urlopen("http://192.0.2.1:9/", timeout=2))
    attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("192.0.2.1", 53)))
    async def aio():
        await asyncio.open_connection("192.0.2.1", 9)
    attempt("asyncio", lambda: asyncio.run(aio()))
    print(json.dumps(out))
""")


def _run_child(tmp_path: Path, log: Path | None) -> tuple[dict, subprocess.CompletedProcess]:
    env = envs.worker_env(tmp_path, {}, egress_log=log)
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc


def test_guard_refuses_and_records_every_non_loopback_attempt(tmp_path) -> None:
    log = tmp_path / "egress.jsonl"
    out, proc = _run_child(tmp_path, log)
    assert out["guard"] is True, "worker_env puts the guard on PYTHONPATH; sitecustomize installed it"
    assert out["loopback"] == "ok" and out["localhost"], "loopback (the proxy) stays reachable"
    for key in ("connect", "urllib", "udp", "asyncio"):
        assert "egress guard" in out[key] or "unreachable" in out[key].lower(), (key, out[key])
    assert out["connect_ex"] == errno.ENETUNREACH
    assert out["resolve"].startswith("gaierror"), out["resolve"]
    attempts = envs.egress_attempts(log)
    ops = [a["op"] for a in attempts]
    assert ops.count("connect") >= 2 and ops.count("getaddrinfo") >= 2 and "connect_ex" in ops and "sendto" in ops and "getaddrinfo" in ops, ops
    assert all("192.0.2.1" in a["target"] or ".invalid" in a["target"] for a in attempts), attempts
    assert all(a["where"] for a in attempts), "each record says where the attempt came from"
    assert "refused" in proc.stderr


def test_nothing_recorded_when_nothing_is_attempted(tmp_path) -> None:
    log = tmp_path / "egress.jsonl"
    env = envs.worker_env(tmp_path, {}, egress_log=log)
    code = "import socket, sitecustomize; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(sitecustomize.GUARD_ACTIVE)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.stdout.strip() == "True", proc.stderr
    assert envs.egress_attempts(log) == [] and not log.exists()


def test_every_worker_iterates_a_set_of_strings_in_one_order(tmp_path) -> None:
    # HippoRAG 2 breaks score ties among linked phrases in a set's iteration order; with a random
    # string-hash seed per process its export replay chose other phrases (EpBench-20, 2026-12-05)
    code = "print(list({f'entity-{i}' for i in range(40)}))"

    def order(env: dict[str, str]) -> str:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    env = envs.worker_env(tmp_path, {}, egress_log=None)
    assert len({order(env) for _ in range(3)}) == 1
    random_seed = {k: v for k, v in env.items() if k != "PYTHONHASHSEED"}
    assert len({order(random_seed) for _ in range(3)}) > 1  # what a worker without it would do
