"""The Ray environment: the framework's requirements plus ray and hydra-ray-launcher, in its own venv.

Why its own: hydra-ray-launcher declares cloudpickle<3 and boto3 (for its AWS launcher only), which
the framework's lock cannot hold (joblib 1.6 needs cloudpickle>=3; python-dateutil 4 rules out every
botocore), and ray is ~400 MB that a single machine never needs. `requirements/lock-ray.txt`
(scripts/lock_env.sh) pins every distribution at the local lock's versions, so a job run by a Ray
worker computes what the same job computes in the framework's venv; it is installed exactly, with
hashes and without a resolver, like setup.sh installs the framework (methods/external/envs.py makes
it, under $MEMEVAL_HOME/envs/ray-<hash of the lock>). The driver (`python run.py -m
hydra/launcher=memeval_ray ...`), `ray start` and so every Ray worker use this environment's python.
Create it with `python scripts/setup_ray.py`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from memeval.methods.external import envs
from memeval.paths import ROOT

# what the dependency check may find broken, and nothing else: hydra-ray-launcher is installed without
# its dependencies; boto3 and cloudpickle<3 serve its ray_aws launcher (a job pickled here, unpickled
# on EC2), never hydra/launcher=ray
ACCEPTED_CONFLICTS = (("hydra-ray-launcher", "boto3"), ("hydra-ray-launcher", "cloudpickle"))
SPEC = envs.EnvSpec("ray", str(ROOT / "requirements" / "lock-ray.txt"), hashed=True,
                    check_allows=ACCEPTED_CONFLICTS, probe="hydra_plugins.hydra_ray_launcher._core",
                    build_cost=("1.2 GB", "a few minutes"))


def ray_env_dir() -> Path:
    """Where the environment of the current lock lives (whether or not it is set up)."""
    return envs.spec_dir(SPEC)


def find_ray_env() -> Path | None:
    """The ready environment (memeval importable in it), or None if `python scripts/setup_ray.py`
    has not completed."""
    env = envs.find_env(SPEC)
    return env if env is not None and _imports_this_checkout(env) else None


def ensure_ray_env(log=print) -> Path:  # noqa: ANN001 - any print-like callable
    """Create the environment once (under a file lock; a second caller waits) and return its folder."""
    env = envs.ensure_spec(SPEC, log)
    if not _imports_this_checkout(env):
        # the lock pins the framework's dependencies, not the framework: the driver (run.py) and
        # every Ray worker import memeval from this checkout's src/, through a .pth file (what an
        # editable install writes; the environment has no pip)
        log(f"[envs] {env.name}: memeval from {ROOT / 'src'} (a .pth file in its site-packages)")
        site = subprocess.run([str(python(env)), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        (Path(site) / "memeval-checkout.pth").write_text(str((ROOT / "src").resolve()) + "\n", encoding="utf-8")
    return env


def _imports_this_checkout(env: Path) -> bool:
    code = "import memeval, pathlib, sys; sys.exit(pathlib.Path(memeval.__file__).resolve().parents[1] != pathlib.Path(sys.argv[1]))"
    done = subprocess.run([str(python(env)), "-c", code, str((ROOT / "src").resolve())], capture_output=True)
    return done.returncode == 0


def python(env: Path) -> Path:
    return envs.env_python(env)


def ray_cli(env: Path) -> Path:
    """The environment's `ray` command: a head or worker started with it runs jobs in this venv."""
    return env / "bin" / "ray"
