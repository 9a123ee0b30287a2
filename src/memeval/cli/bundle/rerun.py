"""Rerun one run folder from its saved resolved config, from the cache alone, in a scratch folder.

Export uses it to find the cache keys behind a run (run folders never recorded them) and
verify uses it to prove a bundle reproduces: both rerun the run through the normal pipeline
(`memeval.harness.pipeline.run`, what run.py calls) inside `memeval.harness.replay.replaying`, so every cache
read is recorded and any call that would be paid for is refused. Output and index roots point
into the scratch folder, so the index is rebuilt from cached calls, never reused from
runs/_indexes, and the run's own folder is never touched.
"""

from __future__ import annotations

import contextlib
import json
import lzma
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from memeval.evaluation.runs.folder import PACKED, RunFolder, artifact
from memeval.evaluation.runs.scoring import saved_metrics_text
from memeval.evaluation.runs.upgrade import with_current_paths
from memeval.harness.replay import Replay, replaying
from memeval.methods.imported import RUN_COPY
from memeval.model_access.cache import ResponseCache

ALL_STAGES = ["index", "answer", "judge", "score"]


@dataclass
class Rerun:
    """What replaying one run gave: keys read, calls refused, the replay's folders, metric diffs."""

    run: Path
    seconds: float = 0.0
    keys: set[str] = field(default_factory=set)
    refused: list[str] = field(default_factory=list)
    error: str | None = None
    out_dir: Path | None = None
    index_dir: Path | None = None
    metrics_diff: list[str] = field(default_factory=list)
    data_version: str | None = None

    @property
    def ok(self) -> bool:
        return not (self.refused or self.error or self.metrics_diff)

    def problems(self, limit: int = 10) -> list[str]:
        out = [f"new model call needed: {r}" for r in self.refused[:limit]]
        if len(self.refused) > limit:
            out.append(f"... and {len(self.refused) - limit} more calls missing from the cache")
        if self.error and not self.refused:
            out.append(f"error: {self.error}")
        out += [f"metrics.json differs: {d}" for d in self.metrics_diff[:limit]]
        if len(self.metrics_diff) > limit:
            out.append(f"... and {len(self.metrics_diff) - limit} more differing metrics")
        return out


def replay_config(run: Path, work: Path, cache_path: Path | None, cache_backend: str | None,
                  data_dir: Path | None) -> Any:
    """The run's config.yaml, retargeted: scratch output and index roots, the given cache, all
    stages, no tracking, budget, batch queue or shared servers (none changes a number)."""
    cfg = OmegaConf.to_container(OmegaConf.load(run / "config.yaml"), resolve=False)
    assert isinstance(cfg, dict)
    saved_data = str(cfg.get("data_dir") or "data")
    target = str(data_dir) if data_dir is not None else (
        saved_data if Path(saved_data).exists() else os.environ.get("MEMEVAL_DATA", "data"))
    if target != saved_data:  # loader and protocol hold resolved copies of data_dir
        cfg = _replace_prefix(cfg, saved_data, target)
    cfg.update({
        "output_root": str(work / "runs"), "index_root": str(work / "indexes"),
        "cache_path": str(cache_path) if cache_path is not None else cfg.get("cache_path"),
        "cache_backend": cache_backend or cfg.get("cache_backend") or "sqlite",
        "stages": list(ALL_STAGES), "share_servers": False, "lock_wait_s": 0,
    })
    copy = artifact(run / RUN_COPY)
    if copy.exists() and isinstance(cfg.get("method"), dict):  # imported answers: the folder's own copy
        if copy.name.endswith(PACKED):  # a bundle ships a large one packed: unpacked byte for byte
            work.mkdir(parents=True, exist_ok=True)
            plain = work / RUN_COPY
            plain.write_bytes(lzma.decompress(copy.read_bytes()))
            copy = plain
        cfg["method"]["answers_file"] = str(copy.resolve())
    cfg.setdefault("tracking", {})["mode"] = "disabled"
    cfg.setdefault("budget", {})["usd"] = None
    cfg.setdefault("batch", {})["stages"] = []
    return with_current_paths(OmegaConf.create(cfg))


def _keep_answers_copy(run: Path, out: Path) -> None:
    """An imported run's answers file (as the run folder keeps it, packed or not) goes with its
    replay: a replay kept by `verify --keep` is then a whole run folder, and an export from it
    still replays where the first bundle no longer exists."""
    for name in (RUN_COPY, RUN_COPY + PACKED):
        if (run / name).is_file() and not (out / name).exists():
            shutil.copy2(run / name, out / name)


def _replace_prefix(obj: Any, old: str, new: str) -> Any:
    if isinstance(obj, dict):
        return {k: _replace_prefix(v, old, new) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_replace_prefix(v, old, new) for v in obj]
    if isinstance(obj, str) and (obj == old or obj.startswith(old.rstrip("/") + "/")):
        return new + obj[len(old):]
    return obj


def rerun(run: Path, work: Path, cache_path: Path | None = None, cache_backend: str | None = None,
          data_dir: Path | None = None, values: ResponseCache | None = None,
          replay: Replay | None = None) -> Rerun:
    """Replay `run` in `work` (created) and compare its metrics.json with the run's, byte for byte
    (a run saved in an older format is compared as the upgrade module reads it). `replay`, when
    given, is the recorder to use (verify's progress lines read it while the replay runs)."""
    from memeval.harness.pipeline import run as run_pipeline
    from memeval.harness.resolvers import register_resolvers

    register_resolvers()
    work.mkdir(parents=True, exist_ok=True)
    result = Rerun(run)
    replay = replay or Replay(values=values)
    cfg = replay_config(run, work, cache_path, cache_backend, data_dir)
    t0 = time.perf_counter()
    with (_quiet(work / "replay.log"), replaying(replay)):
        try:
            out = run_pipeline(cfg)
            result.out_dir = Path(out) if out else None
        except BaseException as exc:  # noqa: BLE001 - a failed replay is a result, reported per run
            if isinstance(exc, KeyboardInterrupt):
                raise
            result.error = f"{type(exc).__name__}: {_first_line(exc)}"
            found = sorted((work / "runs").glob(f"*/{run.name}"))
            result.out_dir = found[0] if found else None
    result.seconds = time.perf_counter() - t0
    result.keys, result.refused = set(replay.keys), list(replay.refused)
    if result.out_dir is not None:
        _keep_answers_copy(run, result.out_dir)
        _compare(run, result, data_dir)
    elif not result.error:
        result.error = "the replay wrote no run folder"
    return result


def _compare(run: Path, result: Rerun, data_dir: Path | None = None) -> None:
    out = result.out_dir
    assert out is not None
    if (out / "meta.json").exists():
        result.data_version = json.loads((out / "meta.json").read_text()).get("data_version")
        saved = json.loads((run / "meta.json").read_text()).get("data_version")
        if saved != result.data_version:
            result.metrics_diff.append(f"data_version: bundle {saved!r}, this machine {result.data_version!r}")
    if (out / "index.json").exists():
        folder = json.loads((out / "index.json").read_text()).get("index_folder")
        result.index_dir = Path(folder) if folder else None
    if result.error:
        return
    theirs = out / "metrics.json"
    if not theirs.exists():
        result.metrics_diff.append("the replay wrote no metrics.json")
        return
    # an older run's file as today's score stage writes it (its dataset facts read from the data)
    mine = saved_metrics_text(RunFolder(run), data_dir)
    if mine.encode("utf-8") != theirs.read_bytes():
        result.metrics_diff.extend(metrics_diff(json.loads(mine), json.loads(theirs.read_text()))
                                   or ["same values, different bytes (formatting or key order)"])


def metrics_diff(old: Any, new: Any, path: str = "") -> list[str]:
    """`key.path: old -> new` for every leaf that differs."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for k in sorted(set(old) | set(new), key=str):
            sub = f"{path}.{k}" if path else str(k)
            if k not in new:
                out.append(f"{sub}: {_short(old[k])} -> (absent)")
            elif k not in old:
                out.append(f"{sub}: (absent) -> {_short(new[k])}")
            else:
                out += metrics_diff(old[k], new[k], sub)
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [d for i, (a, b) in enumerate(zip(old, new, strict=True)) for d in metrics_diff(a, b, f"{path}[{i}]")]
    return [] if old == new else [f"{path or '(root)'}: {_short(old)} -> {_short(new)}"]


def _short(v: Any) -> str:
    s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= 80 else s[:77] + "..."


def _first_line(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return (text.splitlines() or [type(exc).__name__])[0][:400]


@contextlib.contextmanager
def _quiet(log: Path) -> Iterator[None]:
    """The pipeline prints each table and shows progress bars; a replay keeps them in a log (and an
    embedding model's loading bar, on stderr, off: verify's own progress lines are there)."""
    quiet = {"MEMEVAL_PROGRESS": "0", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    old = {k: os.environ.get(k) for k in quiet}
    os.environ.update(quiet)
    try:
        with open(log, "a", encoding="utf-8") as fh, contextlib.redirect_stdout(fh):
            yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
