"""Parallel jobs on one node share one local server per model spec (no llama-server started)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from memeval.model_access.server_registry import NodeServers, spec_key

ROOT = Path(__file__).resolve().parents[1]

JOB = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from memeval.model_access.server_registry import NodeServers
root, started, hold, start_at = Path(sys.argv[2]), Path(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
reg = NodeServers(root, healthy=lambda url: True, poll_s=0.05)
while time.time() < start_at:
    time.sleep(0.005)
def start():
    time.sleep(0.3)  # a server takes a while to come up: the others must wait, not start their own
    with started.open("a") as fh:
        fh.write("started\n")
    return "http://127.0.0.1:9/v1"
print(reg.acquire("spec", start), flush=True)
time.sleep(hold)
reg.release("spec")
"""


def _job(tmp: Path, hold: float, start_at: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", JOB, str(ROOT), str(tmp / "reg"), str(tmp / "started"),
                             str(hold), str(start_at)], stdout=subprocess.PIPE, text=True)


def test_concurrent_jobs_start_one_server_and_share_its_url(tmp_path) -> None:
    start_at = time.time() + 1.0
    jobs = [_job(tmp_path, 0.5, start_at) for _ in range(3)]
    urls = {j.communicate(timeout=60)[0].strip() for j in jobs}
    assert urls == {"http://127.0.0.1:9/v1"}
    assert (tmp_path / "started").read_text().count("started") == 1


def test_a_dead_owner_or_unhealthy_server_is_replaced(tmp_path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    reg = NodeServers(tmp_path, healthy=lambda url: True)
    (tmp_path / "k.json").write_text(json.dumps({"base_url": "http://old/v1", "owner": int(gone.stdout),
                                                 "users": [int(gone.stdout)]}))
    assert reg.acquire("k", lambda: "http://new/v1") == "http://new/v1"
    sick = NodeServers(tmp_path, healthy=lambda url: url != "http://new/v1")
    assert sick.acquire("k", lambda: "http://newer/v1") == "http://newer/v1"
    assert reg.acquire("k", lambda: "never") == "http://newer/v1"  # alive + healthy: reused


def test_owner_keeps_serving_until_other_jobs_are_done(tmp_path) -> None:
    reg = NodeServers(tmp_path / "reg", healthy=lambda url: True, poll_s=0.05)
    assert reg.acquire("spec", lambda: "http://127.0.0.1:9/v1").endswith("/v1")
    user = _job(tmp_path, 1.5, time.time())  # joins as a user, works 1.5 s, leaves
    while not reg.other_users("spec"):
        time.sleep(0.05)
    t0 = time.monotonic()
    reg.wait_for_users(timeout_s=30)
    assert time.monotonic() - t0 > 0.5  # waited for the other job
    assert user.wait(timeout=30) == 0 and not (tmp_path / "started").exists()  # it never started one
    assert not (tmp_path / "reg" / "spec.json").exists()  # the owner removed its entry


def test_spec_key_is_stable_per_spec() -> None:
    class Spec:
        def __init__(self, m: str) -> None:
            self.m = m

        def key(self) -> tuple:
            return (self.m, 4)

    assert spec_key(Spec("a")) == spec_key(Spec("a")) != spec_key(Spec("b"))
