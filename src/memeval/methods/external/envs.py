"""One managed virtual environment per baseline package, created once, found by a hash of its pins.

The official packages cannot share an environment (GraphRAG pins openai < 3 through
litellm, HippoRAG2's published pins cannot be installed, LightRAG wants openai it does not
declare), so each gets its own venv under $MEMEVAL_HOME/envs/<name>-<hash>. The hash covers the
lock file, the no-deps extras, the stand-in modules and the Python version, so changing any pin
creates a fresh environment instead of mutating one in place. A file lock makes concurrent
setups wait for each other, and a marker written last says the environment is complete.
Each package method's class declares its own spec (`env_spec`: methods/external/<name>.py, or a
third party's class); `specs()` collects them through the plugin registry, by name.

The same machinery makes the Ray environment (harness/ray_env.py): a spec whose lock is complete
and hashed (`hashed=True`) is installed as setup.sh installs the framework's own lock
(--no-deps --require-hashes, then a check that finds no broken requirement but those the spec names).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memeval.paths import REQUIREMENTS

HERE = Path(__file__).parent
LOCKS = HERE / "locks"
# workers/egress_guard/sitecustomize.py: on every worker's PYTHONPATH (see its docstring)
EGRESS_GUARD = HERE / "workers" / "egress_guard"
MARKER = ".memeval_env.json"
# A hashed environment is installed by uv (requirements/uv.txt, pinned with hashes; bootstrapped into
# $MEMEVAL_HOME/tools as scripts/lock_env.sh does): it downloads in parallel and needs no pip in the
# new venv, whose ensurepip alone took 45-53 s on a loaded 2-core machine; pip is the fallback.
UV_LOCK = REQUIREMENTS / "uv.txt"
PIP = "pip==26.3"


@dataclass(frozen=True)
class EnvSpec:
    """What one baseline environment holds."""

    name: str
    lock: str  # file under locks/ (or an absolute path: a plugin's own): every distribution pinned
    no_deps: tuple[str, ...] = ()  # installed afterwards with --no-deps (unsatisfiable metadata)
    standins: dict[str, str] = field(default_factory=dict)  # top-level module -> source
    worker: str = ""  # script under workers/ (or an absolute path: a plugin's own worker)
    probe: str = ""  # module whose import proves the environment works
    # a complete, hashed lock (uv pip compile --generate-hashes): installed with --no-deps
    # --require-hashes, then checked; check_allows: the (package, requirement) pairs it may find broken
    hashed: bool = False
    check_allows: tuple[tuple[str, str], ...] = ()
    # what building it costs, said before a build starts (bundle verify, a first run): du -sh of the
    # environment and the time its marker's setup_seconds records on a 2-core machine with warm
    # package caches (slower when every wheel is downloaded). Not part of the fingerprint.
    build_cost: tuple[str, str] = ("", "")

    @property
    def lock_path(self) -> Path:
        return LOCKS / self.lock  # an absolute `lock` names a file elsewhere (requirements/)

    def lock_text(self) -> str:
        return self.lock_path.read_text(encoding="utf-8")

    def fingerprint(self) -> str:
        fields: dict[str, Any] = {"lock": self.lock_text(), "no_deps": self.no_deps,
                                  "standins": self.standins, "python": sys.version_info[:2]}
        if self.hashed:  # only when set: the baselines' existing environments keep their names
            fields |= {"hashed": True, "check_allows": self.check_allows}
        blob = json.dumps(fields, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def specs() -> dict[str, EnvSpec]:
    """name -> spec of every registered method's environment (its class's `env_spec`), by name.

    Each package method declares its own spec (methods/external/<name>.py, or a third party's
    class registered under the `memeval.methods` entry points), so adding one touches no table here.
    """
    from memeval.plugins import load_all

    found: dict[str, EnvSpec] = {}
    for plugin_name, cls in load_all("method").items():
        spec = getattr(cls, "env_spec", None)
        if not isinstance(spec, EnvSpec):
            continue
        other = found.get(spec.name)
        if other is not None and other != spec:
            raise ValueError(f"two method plugins declare different {spec.name!r} environments "
                             f"(the second: {plugin_name!r}); give one spec its own name")
        found[spec.name] = spec
    return dict(sorted(found.items()))


def spec(name: str) -> EnvSpec:
    """The environment spec a registered method declares under `name`; a KeyError naming the known ones."""
    known = specs()
    if name not in known:
        raise KeyError(f"unknown baseline environment {name!r}; known: {sorted(known)}")
    return known[name]


def build_notice(spec: str | EnvSpec, purpose: str = "") -> str | None:
    """One line announcing that `spec`'s environment is about to be built (its size, its time, that it
    is built once), or None when it is ready (or unknown): say it before a build, never after."""
    spec = specs().get(spec) if isinstance(spec, str) else spec
    if spec is None or find_env(spec) is not None:
        return None
    size, duration = spec.build_cost
    cost = f" (about {size}, {duration})" if size else ""
    return (f"building the {spec.name} package environment{cost}{' ' + purpose if purpose else ''}; "
            f"it is reused afterwards ({spec_dir(spec)})")


class EnvSetupError(RuntimeError):
    """An environment could not be created; the message carries pip's last output."""


def memeval_home() -> Path:
    return Path(os.environ.get("MEMEVAL_HOME") or Path.home() / ".cache" / "memeval")


def spec_dir(spec: EnvSpec) -> Path:
    return memeval_home() / "envs" / f"{spec.name}-{spec.fingerprint()}"


def env_dir(name: str) -> Path:
    return spec_dir(spec(name))


def env_python(path: Path) -> Path:
    return path / "bin" / "python"


def find_env(name: str | EnvSpec) -> Path | None:
    """The ready environment for `name` (or a spec), or None if setup has not completed."""
    path = spec_dir(name) if isinstance(name, EnvSpec) else env_dir(name)
    return path if (path / MARKER).exists() else None


def env_info(name: str | EnvSpec) -> dict[str, Any] | None:
    path = find_env(name)
    return json.loads((path / MARKER).read_text()) if path else None


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(cmd: list[str], log: Path, cwd: Path, env: dict[str, str] | None = None) -> None:
    with open(log, "a", encoding="utf-8") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        t0 = time.perf_counter()
        rc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=cwd,
                            env=env or _pip_env(), check=False).returncode
        fh.write(f"# exit {rc} after {time.perf_counter() - t0:.1f}s\n")  # where a slow setup spent it
    if rc != 0:
        lines = [ln for ln in log.read_text(errors="replace").splitlines()
                 if not ln.startswith("WARNING: Location")]
        raise EnvSetupError(f"command failed ({rc}): {' '.join(cmd)}\n" + "\n".join(lines[-25:]))


def _pip_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _base_python() -> str:
    """The interpreter behind the framework's venv (a venv made from a venv's python nests oddly)."""
    return getattr(sys, "_base_executable", None) or sys.executable


def dir_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += (Path(root) / f).lstat().st_size
    return total


def ensure_env(name: str, log=print) -> Path:  # noqa: ANN001 - any print-like callable
    """Create the environment if needed (once, under a file lock) and return its folder."""
    return ensure_spec(spec(name), log)


# `pip check` / `uv pip check` lines naming a broken requirement: (package, requirement name)
_BROKEN = (re.compile(r"^(\S+) \S+ (?:requires|has requirement) ([A-Za-z0-9_.-]+)"),
           re.compile(r"^The package `([^`]+)` requires `([A-Za-z0-9_.-]+)"))
_CHECK_INFO = ("No broken requirements", "All installed packages are compatible", "Using Python", "Checked ",
               "Found ")


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _note(log_file: Path, text: str) -> None:
    with open(log_file, "a", encoding="utf-8") as fh:
        fh.write(text.rstrip("\n") + "\n")


def _check(cmd: list[str], spec: EnvSpec, log_file: Path, cwd: Path) -> None:
    """Fail on every broken requirement but those the spec accepts (and says why)."""
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=_pip_env(), check=False)
    _note(log_file, "$ " + " ".join(cmd) + "\n" + proc.stdout + proc.stderr)
    accepted = {(_canon(a), _canon(b)) for a, b in spec.check_allows}
    bad = []
    for line in (proc.stdout + proc.stderr).splitlines():
        if not line.strip() or line.startswith(_CHECK_INFO):
            continue
        found = next((m for r in _BROKEN if (m := r.match(line))), None)
        if found is None or (_canon(found[1]), _canon(found[2])) not in accepted:
            bad.append(line)
    if bad:
        raise EnvSetupError(f"{cmd[0]} check failed in {spec.name}:\n" + "\n".join(bad[-25:]))


def uv_version() -> str:
    found = re.search(r"^uv==([0-9.]+)", UV_LOCK.read_text(encoding="utf-8"), re.M)
    assert found, f"{UV_LOCK} pins no uv"
    return found[1]


def uv_tool(log_file: Path) -> str | None:
    """The pinned uv in $MEMEVAL_HOME/tools/uv-VERSION/bin (where scripts/lock_env.sh puts it too),
    installed once by this interpreter's pip, hash-checked; None if that fails (no pip, no network)."""
    tools = memeval_home() / "tools" / f"uv-{uv_version()}"
    uv = tools / "bin" / "uv"
    tools.parent.mkdir(parents=True, exist_ok=True)
    with _file_lock(tools.with_suffix(".lock")):
        if not uv.exists():
            try:
                _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--require-hashes",
                      "--target", str(tools), "-r", str(UV_LOCK)], log_file, tools.parent)
            except EnvSetupError:
                return None
    return str(uv) if uv.exists() else None


def _uv_env() -> dict[str, str]:
    env = _pip_env()
    if env.get("PIP_INDEX_URL") and not env.get("UV_INDEX_URL"):  # uv reads neither pip.conf nor PIP_*
        env["UV_INDEX_URL"] = env["PIP_INDEX_URL"]
    if env.get("PIP_CERT") and not env.get("SSL_CERT_FILE"):
        env["SSL_CERT_FILE"] = env["PIP_CERT"]
    return env


def _make_hashed(path: Path, spec: EnvSpec, log_file: Path) -> None:
    """A venv of exactly the lock's distributions, hash-checked, no resolver (as setup.sh installs the
    framework's own), with no broken requirement but those the spec accepts."""
    cwd, py = path.parent, str(env_python(path))
    lock = ["--no-deps", "--require-hashes", "-r", str(spec.lock_path)]
    uv = uv_tool(log_file)
    if uv is None:  # pip at setup.sh's version: slower, the same distributions
        _note(log_file, "# uv could not be installed: installing with pip")
        _run([_base_python(), "-m", "venv", str(path)], log_file, cwd)
        pip = [py, "-m", "pip", "install", "--no-input", "--progress-bar", "off"]
        _run([*pip, "-q", PIP], log_file, cwd)
        _run([*pip, *lock], log_file, cwd)
        _check([py, "-m", "pip", "check"], spec, log_file, cwd)
        return
    # no ensurepip: it took 53 s of a loaded 2-core machine to install a pip nothing here uses
    _run([_base_python(), "-m", "venv", "--without-pip", str(path)], log_file, cwd)
    # --compile-bytecode as pip does: with PYTHONDONTWRITEBYTECODE set (as here, and in every worker)
    # each process would compile its imports from source: a Ray node's agents outlasted the raylet's
    # 15 s wait for them on a loaded 2-core machine
    _run([uv, "pip", "install", "--no-progress", "--compile-bytecode", "--python", py, *lock], log_file,
         cwd, _uv_env())
    _check([uv, "pip", "check", "--python", py], spec, log_file, cwd)


def ensure_spec(spec: EnvSpec, log=print) -> Path:  # noqa: ANN001 - any print-like callable
    """Create `spec`'s environment if needed (once, under a file lock) and return its folder."""
    if spec.hashed and spec.no_deps:  # uv leaves no pip behind to install them with
        raise ValueError(f"{spec.name}: a hashed lock lists its no-deps packages itself")
    name = spec.name
    path = spec_dir(spec)
    with _file_lock(path.with_suffix(".lock")):
        if (path / MARKER).exists():
            return path
        if path.exists():
            shutil.rmtree(path)  # an interrupted setup: start over
        t0 = time.perf_counter()
        path.parent.mkdir(parents=True, exist_ok=True)
        setup_log = path.parent / f"{path.name}.setup.log"
        setup_log.write_text("")
        size, duration = spec.build_cost if spec.build_cost[0] else ("?", "minutes")
        log(f"[envs] creating {path} (about {size}, {duration}; log: {setup_log})")
        py = str(env_python(path))
        pip = [py, "-m", "pip", "install", "--no-input", "--progress-bar", "off"]
        if spec.hashed:
            _make_hashed(path, spec, setup_log)
        else:
            _run([_base_python(), "-m", "venv", str(path)], setup_log, path.parent)
            _run([*pip, "-r", str(spec.lock_path)], setup_log, path.parent)
        if spec.no_deps:
            _run([*pip, "--no-deps", "--pre", *spec.no_deps], setup_log, path.parent)
        if spec.standins:
            site = Path(subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                       capture_output=True, text=True, check=True).stdout.strip())
            for module, source in spec.standins.items():
                (site / module).mkdir(exist_ok=True)
                (site / module / "__init__.py").write_text(source, encoding="utf-8")
        if spec.probe:  # imported exactly as a worker would be: clean env, empty folder
            home = path / "home"
            home.mkdir(exist_ok=True)
            _run([py, "-c", f"import {spec.probe}"], setup_log, home, worker_env(path, {}))
        seconds = round(time.perf_counter() - t0, 1)
        info = {"name": name, "fingerprint": spec.fingerprint(), "setup_seconds": seconds,
                "size_bytes": dir_size(path), "python": list(sys.version_info[:3]),
                "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
        (path / MARKER).write_text(json.dumps(info, indent=1))
        log(f"[envs] {name} ready in {seconds}s")
        return path


def offline_tiktoken_dir() -> Path:
    """The framework's offline tiktoken cache (o200k_base and cl100k_base), for every worker."""
    from memeval.model_access.tokenizer import install_offline_encoding

    install_offline_encoding("cl100k_base")
    return install_offline_encoding("o200k_base")


def worker_env(path: Path, extra: dict[str, str], egress_log: Path | None = None) -> dict[str, str]:
    """A clean environment: nothing inherited that a package might read as a setting.

    The packages read many defaults from environment variables (LightRAG: TOP_K, MAX_ASYNC, ...;
    GraphRAG: GRAPHRAG_*; litellm: proxies and price-map fetching), so workers start from an
    empty environment plus the offline switches and whatever the caller passes explicitly.
    Every worker runs under the egress guard (workers/egress_guard/): loopback only, and each
    refused attempt is appended to `egress_log` when given, and with a fixed string-hash seed.
    """
    home = path / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": f"{path / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "PYTHONUNBUFFERED": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_TELEMETRY": "False",
        "DO_NOT_TRACK": "1",
        "ANONYMIZED_TELEMETRY": "False",
        "TIKTOKEN_CACHE_DIR": str(offline_tiktoken_dir()),
        "OPENAI_API_KEY": "sk-memeval-local-proxy",  # the packages insist on one; the proxy ignores it
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2"),
        "TOKENIZERS_PARALLELISM": "false",
        # One string-hash seed in every worker process: a package that iterates a set of strings
        # then does so in one order, so ties break the same way in the run and in its replay
        # (HippoRAG 2 ranks linked phrases by a stable sort over a set's order: with a random
        # seed, EpBench-20's export replay chose other phrases and needed new calls, 2026-12-05).
        "PYTHONHASHSEED": "0",
    }
    env["PYTHONPATH"] = str(EGRESS_GUARD)
    if egress_log is not None:
        env["MEMEVAL_EGRESS_LOG"] = str(egress_log)
    env.update(extra)
    return env


def egress_attempts(log: Path) -> list[dict[str, Any]]:
    """The connections the egress guard refused, as recorded in `log` (none: empty list)."""
    try:
        lines = log.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        with contextlib.suppress(ValueError):
            out.append(json.loads(line))
    return out
