"""The Ray environment's lock and its dependency check, without building it (test_ray_sweep.py does)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from memeval.harness import ray_env
from memeval.methods.external import envs

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([a-z0-9][a-z0-9._-]*)==([^ \\]+)", re.M)


def _pins(name: str) -> dict[str, str]:
    return dict(PIN.findall((ROOT / "requirements" / name).read_text()))


def test_the_ray_lock_has_the_local_locks_version_of_every_package_they_share() -> None:
    ray, local = _pins("lock-ray.txt"), _pins("lock-local.txt")
    assert {"ray", "hydra-ray-launcher", "hydra-core", "numpy", "openai"} <= ray.keys()
    assert "boto3" not in ray and not ray["cloudpickle"].startswith("2.")  # the launcher's AWS pins
    differ = {n: (v, local[n]) for n, v in ray.items() if n in local and local[n] != v}
    assert not differ, differ


def _printer(*lines: str) -> list[str]:
    return [sys.executable, "-c", "import sys; print(sys.argv[1])", "\n".join(lines)]


@pytest.mark.parametrize("style", ["uv", "pip"])
def test_the_check_accepts_the_launchers_two_conflicts_and_nothing_else(tmp_path, style) -> None:
    said = {"uv": ["Checked 104 packages in 0.7s", "Found 2 incompatibilities",
                   "The package `hydra-ray-launcher` requires `boto3`, but it's not installed",
                   "The package `hydra-ray-launcher` requires `cloudpickle<3`, but `3.1.3` is installed"],
            "pip": ["hydra-ray-launcher 1.2.2 requires boto3, which is not installed.",
                    "hydra-ray-launcher 1.2.2 has requirement cloudpickle<3, but you have cloudpickle 3.1.3."]}
    other = {"uv": "The package `ray` requires `click>=7.0`, but `6.0` is installed",
             "pip": "ray 2.60.0 has requirement click>=7.0, but you have click 6.0."}
    log = tmp_path / "setup.log"
    envs._check(_printer(*said[style]), ray_env.SPEC, log, tmp_path)  # accepted: no error
    with pytest.raises(envs.EnvSetupError, match="click"):
        envs._check(_printer(*said[style], other[style]), ray_env.SPEC, log, tmp_path)
    with pytest.raises(envs.EnvSetupError, match="Traceback"):  # a crash is no clean bill either
        envs._check(_printer("Traceback (most recent call last):"), ray_env.SPEC, log, tmp_path)


def test_the_ray_env_is_named_by_its_lock_and_the_baselines_keep_their_names() -> None:
    assert ray_env.ray_env_dir().name == f"ray-{ray_env.SPEC.fingerprint()}"
    # a hashed spec adds its fields to the fingerprint; an unhashed one hashes as before they existed
    plain = envs.EnvSpec("x", ray_env.SPEC.lock)
    assert plain.fingerprint() != ray_env.SPEC.fingerprint()
    import hashlib
    import json

    old = json.dumps({"lock": plain.lock_text(), "no_deps": (), "standins": {},
                      "python": sys.version_info[:2]}, sort_keys=True)
    assert plain.fingerprint() == hashlib.sha256(old.encode()).hexdigest()[:12]


def test_a_clean_uv_check_passes_and_a_broken_one_still_fails(tmp_path) -> None:
    """uv 0.13's words for a clean environment (mem0's, 2026-12-02) failed the check before."""
    clean = ["Using Python 3.11.7 environment at: mem0-c921c2e4073e", "Checked 34 packages in 0.57ms",
             "All installed packages are compatible"]
    spec, log = envs.spec("mem0"), tmp_path / "setup.log"
    envs._check(_printer(*clean), spec, log, tmp_path)
    with pytest.raises(envs.EnvSetupError, match="httpx"):
        envs._check(_printer(*clean[:2], "Found 1 incompatibility",
                             "The package `qdrant-client` requires `httpx>=0.20.0`, but it's not installed"),
                    spec, log, tmp_path)


def test_every_hashed_baseline_lock_installs_hashed() -> None:
    """A hashed lock given to pip's resolver lets an extra's requirement reach past its pins (mem0:
    qdrant-client's httpx[http2] fetched an unpinned httpx and setup failed); with --no-deps it cannot."""
    for name, spec in envs.specs().items():
        hashed_lock = "--hash=sha256:" in spec.lock_text()
        assert spec.hashed == hashed_lock, f"{name}: lock hashed {hashed_lock}, installed hashed {spec.hashed}"


def test_an_environment_is_found_by_name_through_the_method_class_that_declares_it() -> None:
    from memeval.methods.external.mem0 import Mem0Method

    assert envs.spec("mem0") is Mem0Method.env_spec and envs.find_env("mem0") == envs.find_env(Mem0Method.env_spec)
    with pytest.raises(KeyError, match="unknown baseline environment 'no-such-package'"):
        envs.spec("no-such-package")
