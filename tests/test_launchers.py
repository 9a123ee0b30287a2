"""Hydra launchers: a parallel sweep writes the same run folders as a serial one."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from conftest import run_cli, scripted_overrides

VOLATILE = {"meta.json": ("started", "git_commit"), "index.json": ("corpora",)}
COMPARED = ("config.yaml", "predictions.jsonl", "judgments.jsonl", "metrics.json", "results.md",
            "meta.json", "index.json")


def _folder(run: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    for name in COMPARED:
        text = (run / name).read_text().replace(str(run.parents[2]), "<tmp>")
        if name in VOLATILE:
            data = json.loads(text)
            for key in VOLATILE[name]:
                data.pop(key, None)
            out[name] = data
        else:
            out[name] = text
    usage = json.loads((run / "usage.json").read_text())  # who paid may differ; what was done may not
    out["usage"] = {s: [v["fresh"]["calls"] + v["cached"]["calls"],
                        v["fresh"]["prompt_tokens"] + v["cached"]["prompt_tokens"]]
                    for s, v in usage["stages"].items()}
    return out


def _sweep(server, tmp: Path, data_dir: Path, *launcher: str) -> dict[str, dict[str, object]]:
    args = ["-m", "method=vanilla,embedding_rag", "dataset=epbench20", "subset.n=4",
            *scripted_overrides(server, tmp, data_dir), *launcher]
    r = run_cli(args)
    assert r.returncode == 0, r.stderr[-3000:]
    runs = sorted((tmp / "runs" / "epbench20").glob("*-*"))
    assert len(runs) == 2, runs
    return {p.name: _folder(p) for p in runs}


@pytest.mark.skipif(importlib.util.find_spec("hydra_plugins.hydra_joblib_launcher") is None,
                    reason="pip install -e '.[scale]' (hydra-joblib-launcher)")
def test_joblib_sweep_writes_the_same_run_folders_as_a_serial_sweep(scripted, tmp_path, data_dir) -> None:
    serial = _sweep(scripted, tmp_path / "serial", data_dir)
    parallel = _sweep(scripted, tmp_path / "joblib", data_dir, "hydra/launcher=joblib", "hydra.launcher.n_jobs=2")
    _same(serial, parallel)


def _same(serial: dict, other: dict) -> None:
    assert serial.keys() == other.keys()
    for name in serial:
        for part in serial[name]:
            assert other[name][part] == serial[name][part], (name, part)


@pytest.mark.skipif(importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is None,
                    reason="pip install -e '.[scale]' (hydra-submitit-launcher)")
def test_submitit_local_executor_sweep_matches_a_serial_sweep(scripted, tmp_path, data_dir) -> None:
    """The SLURM launcher's local executor (same code path as hydra/launcher=memeval_slurm)."""
    serial = _sweep(scripted, tmp_path / "serial", data_dir)
    local = _sweep(scripted, tmp_path / "submitit", data_dir, "hydra/launcher=submitit_local",
                   "hydra.launcher.timeout_min=10")
    _same(serial, local)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(importlib.util.find_spec("hydra_plugins.hydra_ray_launcher") is None
                    or importlib.util.find_spec("ray") is None,
                    reason="pip install -e '.[ray]' (hydra-ray-launcher, ray[default]; ~400 MB)")
def test_ray_sweep_on_a_local_head_matches_a_serial_sweep(scripted, tmp_path, data_dir, monkeypatch) -> None:
    import contextlib
    import os
    import shutil
    import signal
    import subprocess
    import sys
    import tempfile
    import time

    port = _free_port()
    ray_cli = shutil.which("ray") or str(Path(sys.executable).parent / "ray")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # loopback only; the sweep's driver inherits it
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    env = dict(os.environ)
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    head = subprocess.Popen([ray_cli, "start", "--head", "--block", "--node-ip-address=127.0.0.1",
                             f"--port={port}", "--num-cpus=2", "--include-dashboard=false",
                             f"--temp-dir={temp}"], env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120  # the head's GCS and raylet come up (slow on 2 cores)
        while not list(Path(temp).glob("session_*/sockets/raylet*")) and time.time() < deadline:
            assert head.poll() is None, "the Ray head exited while starting"
            time.sleep(0.5)
        time.sleep(2)
        serial = _sweep(scripted, tmp_path / "serial", data_dir)
        on_ray = _sweep(scripted, tmp_path / "ray_sweep", data_dir, "hydra/launcher=ray",
                        f"hydra.launcher.ray.init.address=127.0.0.1:{port}",
                        "+hydra.launcher.ray.remote.num_cpus=1",
                        "+hydra.launcher.ray.init.object_store_memory=null")
        _same(serial, on_ray)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGTERM)  # only the head this test started (its own session)
        head.wait(timeout=60)
        shutil.rmtree(temp, ignore_errors=True)
