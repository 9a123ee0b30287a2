"""Hydra launchers: a parallel sweep writes the same run folders as a serial one (Ray: test_ray_sweep.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from conftest import run_cli, scripted_overrides
from sweep_compare import assert_same, folder_view


def _sweep(server, tmp: Path, data_dir: Path, *launcher: str) -> dict[str, dict[str, object]]:
    args = ["-m", "method=vanilla,embedding_rag", "dataset=epbench20", "subset.n=4",
            *scripted_overrides(server, tmp, data_dir), *launcher]
    r = run_cli(args)
    assert r.returncode == 0, r.stderr[-3000:]
    runs = sorted((tmp / "runs" / "epbench20").glob("*-*"))
    assert len(runs) == 2, runs
    return {p.name: folder_view(p) for p in runs}


@pytest.mark.skipif(importlib.util.find_spec("hydra_plugins.hydra_joblib_launcher") is None,
                    reason="pip install -e '.[scale]' (hydra-joblib-launcher)")
def test_joblib_sweep_writes_the_same_run_folders_as_a_serial_sweep(scripted, tmp_path, data_dir) -> None:
    serial = _sweep(scripted, tmp_path / "serial", data_dir)
    parallel = _sweep(scripted, tmp_path / "joblib", data_dir, "hydra/launcher=joblib", "hydra.launcher.n_jobs=2")
    assert_same(serial, parallel)


@pytest.mark.skipif(importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is None,
                    reason="pip install -e '.[scale]' (hydra-submitit-launcher)")
def test_submitit_local_executor_sweep_matches_a_serial_sweep(scripted, tmp_path, data_dir) -> None:
    """The SLURM launcher's local executor (same code path as hydra/launcher=memeval_slurm)."""
    serial = _sweep(scripted, tmp_path / "serial", data_dir)
    local = _sweep(scripted, tmp_path / "submitit", data_dir, "hydra/launcher=submitit_local",
                   "hydra.launcher.timeout_min=10")
    assert_same(serial, local)
