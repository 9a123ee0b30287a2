"""What a `bundle verify` says while it replays: a line every so often during a run's replay, the
announcement of a package environment the replay is about to build, and Ctrl-C noticed.

The replay itself prints nothing (its tables and bars go to its replay.log), and a baseline's replay
takes minutes, so a watcher thread reads what the replay has done so far, from outside: the calls
it has read (the replay's own record) and the lines of the replay folder's predictions and
judgments. Lines go to stderr and come every `every` seconds (30 by default): short in CI logs.
"""

from __future__ import annotations

import contextlib
import importlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from memeval.evaluation.runs.upgrade import current_target
from memeval.harness.replay import Replay
from memeval.methods.external import envs


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _lines(path: Path) -> int:
    try:
        with open(path, "rb") as fh:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 16), b""))
    except OSError:
        return 0


def replay_status(work: Path, run_name: str, replay: Replay, calls: int, questions: int) -> str:
    """`412/584 calls read, 5/12 answered, 0/12 judged` for the replay of `run_name` under `work`."""
    folders = sorted((work / "runs").glob(f"*/{run_name}"))
    answered = _lines(folders[0] / "predictions.jsonl") if folders else 0
    judged = _lines(folders[0] / "judgments.jsonl") if folders else 0
    read = len(replay.keys)
    return (f"{read}/{calls} calls read, {answered}/{questions} answered, {judged}/{questions} judged"
            if calls else f"{read} calls read, {answered}/{questions} answered, {judged}/{questions} judged")


@contextlib.contextmanager
def watching(label: str, status: Callable[[], str], every: float, out: Callable[[str], None] = say) -> Iterator[None]:
    """Print `label: N s, <status()>` every `every` seconds until the block ends (0: never)."""
    stop = threading.Event()
    t0 = time.monotonic()

    def loop() -> None:
        while not stop.wait(every):
            with contextlib.suppress(Exception):  # a status read racing the replay's writes: skip a beat
                out(f"      {label}: {time.monotonic() - t0:.0f} s, {status()}")

    thread = threading.Thread(target=loop, name="verify-progress", daemon=True) if every > 0 else None
    if thread is not None:
        thread.start()
    try:
        yield
    finally:
        stop.set()
        if thread is not None:
            thread.join(timeout=5)


def package_env(run: Path) -> envs.EnvSpec | None:
    """The baseline package environment a run's method needs (its class's `env_spec`), else None."""
    try:
        saved = OmegaConf.load(run / "config.yaml")  # a run's config is a mapping; a list holds no method
        method = (saved.get("method") if isinstance(saved, DictConfig) else None) or {}
        target = str(current_target(method.get("_target_") or ""))  # a saved config's older class path: today's
        module, _, name = target.rpartition(".")
        cls = getattr(importlib.import_module(module), name) if module else None
    except Exception:  # noqa: BLE001 - an older class path: the replay names the problem itself
        return None
    spec = getattr(cls, "env_spec", None)
    return spec if isinstance(spec, envs.EnvSpec) else None


@contextlib.contextmanager
def sigint_noted() -> Iterator[threading.Event]:
    """An event set on Ctrl-C, which still raises KeyboardInterrupt: a replay may turn that into an
    error of its own (a worker that died, a cancelled task), and the caller must not record that
    as a failed run and go on to the next one."""
    pressed = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield pressed
        return

    def handler(signum: int, frame: Any) -> None:
        pressed.set()
        signal.default_int_handler(signum, frame)

    old = signal.signal(signal.SIGINT, handler)
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, old)
