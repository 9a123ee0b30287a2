"""The local servers' signal hooks: a signal stops the servers and then the run, and a signal the
process was started to ignore (SIGINT for a background job) does neither. On 2026-12-06 a queued
run, started in the background, took a SIGINT: the hook stopped its llama-server and the run went
on, retrying every call against the dead server."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

from conftest import ROOT

PROBE = textwrap.dedent("""
    import os, signal, sys, time
    from memeval.model_access import local_server

    class Pool:  # stands in for a LocalServerPool: the hook only calls close()
        def close(self):
            print("servers stopped", flush=True)

    pool = Pool()
    local_server._register(pool)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.5)
    print("still running", flush=True)
""")


def _probe(ignore_sigint: bool) -> subprocess.CompletedProcess:
    def preexec() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN if ignore_sigint else signal.default_int_handler)

    return subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, preexec_fn=preexec)


def test_sigint_stops_the_servers_then_the_run() -> None:
    out = _probe(ignore_sigint=False)
    assert out.stdout.splitlines()[0] == "servers stopped" and "still running" not in out.stdout
    assert "KeyboardInterrupt" in out.stderr and out.returncode != 0


def test_an_ignored_sigint_leaves_the_servers_and_the_run_alone() -> None:
    out = _probe(ignore_sigint=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["still running", "servers stopped"]  # the latter at exit
