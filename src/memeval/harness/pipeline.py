"""Orchestrates one run: build, start local servers, run the requested stages, score, track."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
from pathlib import Path
from typing import Any

from hydra.utils import instantiate
from omegaconf import DictConfig

from memeval.datasets.facts import cap_holds_corpus, dataset_facts
from memeval.evaluation.runs.folder import RunFolder
from memeval.evaluation.runs.locking import FolderLock
from memeval.evaluation.runs.scoring import score_run
from memeval.evaluation.runs.upgrade import RUN_FORMAT, upgrade_config, with_current_paths
from memeval.methods.base import MemoryMethod, Services
from memeval.methods.imported import run_meta as imported_meta
from memeval.model_access.budget import BudgetExceeded
from memeval.model_access.preflight import EndpointError, endpoint_of, preflight
from memeval.model_access.usage import usage_from_journal

from .build import Components, build
from .config_data import as_dict
from .experiment import experiment_meta
from .health import write_health
from .replay import active_replay
from .schema import check_model_settings
from .stages import answer_stage, index_stage, index_store_root, judge_stage
from .sweep import sweep_name
from .tracking import log_to_wandb
from .versions import git, package_versions

log = logging.getLogger("memeval")
STAGES = ("index", "answer", "judge", "score")
_pool: Any = None  # one local-server pool per process, reused across multirun jobs
_current: list[Path] = []  # the run folder being written (for the Ctrl-C message)


def current_run_dir() -> Path | None:
    return _current[-1] if _current else None


def _server_pool() -> Any:
    global _pool
    if _pool is None:
        from memeval.model_access.local_server import LocalServerPool

        _pool = LocalServerPool()
    return _pool


def _needed(c: Components, stages: list[str]) -> list[Any]:
    """The models the stages call: no judge server for an index-only run, no answering model
    for a re-judge (each local server holds gigabytes and a core while it loads)."""
    want = set(stages)
    out: list[Any] = [c.llm, c.embedder] if want & {"index", "answer"} else []
    if "index" in want and getattr(c, "index_llm", None) is not None:  # an own indexer: its own server
        out.append(c.index_llm)
    return out + [c.judge] if "judge" in want else out


def _start_servers(c: Components, stages: list[str], share: bool = False) -> list[str]:
    """Start (or reuse) the stages' local servers; with share_servers, one per spec for the node."""
    shared: list[str] = []
    for component in _needed(c, stages):
        spec = getattr(component, "server", None)
        if spec is not None and share:
            from memeval.model_access.server_registry import spec_key

            key = spec_key(spec)
            component.serve_at(_node_servers().acquire(key, lambda s=spec: _server_pool().start(s)))
            shared.append(key)
        elif spec is not None:
            component.serve_at(_server_pool().start(spec))
    return shared


_registry: Any = None


def _node_servers() -> Any:
    global _registry
    if _registry is None:
        from memeval.model_access.server_registry import NodeServers

        _registry = NodeServers()
    return _registry


ROLES = {"llm": "answering model", "llm_index": "indexing model", "judge": "judge", "embedder": "embedder"}


def _preflight(c: Components, stages: list[str]) -> None:
    """Reach every remote endpoint the stages call, once (model_access/preflight.py); a replay
    sends nothing and local servers are started by the run itself, so neither is checked."""
    if active_replay() is not None:
        return
    keys = {id(c.llm): "llm", id(c.index_llm): "llm_index", id(c.judge): "judge", id(c.embedder): "embedder"}
    found = [endpoint_of(ROLES[keys[id(m)]], keys[id(m)], m) for m in _needed(c, stages)]
    try:
        preflight([e for e in found if e is not None])
    except EndpointError:
        c.cache.close()
        raise


def _meta(cfg: DictConfig, c: Components) -> dict[str, Any]:
    return {
        "run_format": RUN_FORMAT, "method": c.method_cfg.name, "dataset": c.dataset.name, "data_version": c.dataset.version,
        "data_notes": c.dataset.notes, "answer_model": c.llm.display_name,
        "answer_model_revision": c.llm.model_revision,
        "index_model": c.indexer.display_name, "index_model_revision": c.indexer.model_revision,
        "judge_model": c.judge.display_name,
        "embedder": c.embedder.display_name, "context_cap": c.cap.describe(),
        "subset": c.subset_label, "n_questions": len(c.questions),
        "protocol": c.protocol.describe(),
        "question_ids": [q.id for q in c.questions],  # what a complete run holds (evaluation/runs/completeness.py)
        "answer_with": str(c.method_cfg.get("answer_with") or "shared"),
        **imported_meta(c.method_cfg),  # answers imported from a file: their provenance (else nothing)
        "experiment": experiment_meta(cfg, c),
        "git_commit": git("rev-parse", "HEAD"), "method_code": c.method_code,  # the plugin's source files (harness/plugin.py)
        "versions": package_versions(), "strata_key": c.dataset.strata_key,
        "group_keys": c.dataset.group_keys or [c.dataset.strata_key],
        **dataset_facts(c.dataset, c.pool, (q.id for q in c.questions)),  # population, gold_audit
        "cap_holds_corpus": cap_holds_corpus(c.dataset, c.cap, c.questions),
    }


def run(cfg: DictConfig) -> Path | None:
    """Run the configured stages; returns the run folder (None for stages=[estimate])."""
    for noisy in ("httpx", "httpx2", "openai", "urllib3"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    cfg = with_current_paths(cfg)  # a saved config's class paths from before the memeval namespace
    stages = list(cfg.stages)
    check_model_settings(cfg)  # a model group without its model name or address: one line, nothing built
    if stages == ["estimate"]:  # price the run without making any model call
        from .estimate import estimate, format_estimate

        print(format_estimate(estimate(cfg)))
        return None  # no run folder: nothing for a sweep report to read
    unknown = set(stages) - set(STAGES)
    if unknown:
        from memeval.model_access.errors import ConfigError

        raise ConfigError(f"unknown stage(s) {sorted(unknown)}; choose from {list(STAGES)}")
    c = build(cfg)
    _preflight(c, stages)  # before the run folder exists: a run that cannot start leaves none
    run_dir = RunFolder(c.run_dir)
    _current[:] = [c.run_dir]
    with FolderLock(run_dir.root, "run folder", wait_s=cfg.lock_wait_s):  # before anything is written
        handler = logging.FileHandler(run_dir / "run.log", encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        logging.getLogger().addHandler(handler)
        try:
            return _run(cfg, c, run_dir, stages)
        except BaseException as exc:  # the run's own log says why it stopped (a package's error too)
            logging.getLogger("memeval.run").error("run stopped: %s: %s", type(exc).__name__, exc,
                                                   exc_info=not isinstance(exc, KeyboardInterrupt))
            raise
        finally:
            logging.getLogger().removeHandler(handler)
            handler.close()


def _run(cfg: DictConfig, c: Components, run_dir: RunFolder, stages: list[str]) -> Path:
    run_dir.write_config(cfg)
    meta = _meta(cfg, c)
    meta["started"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    run_dir.write_json("meta.json", meta)
    invocation = f"{meta['started']}-pid{os.getpid()}"
    c.ledger.attach_journal(run_dir / "usage.jsonl", invocation)  # every call, durably, as it completes
    shared: list[str] = []
    if set(stages) & {"index", "answer", "judge"} and active_replay() is None:  # a replay sends nothing
        shared = _start_servers(c, stages, share=bool(cfg.get("share_servers", False)))
    finished = False
    try:
        asyncio.run(_execute(cfg, c, run_dir, stages))
        finished = True
    except BaseExceptionGroup as group:  # a budget stop inside a stage's task group: say so plainly
        stop = group.subgroup(BudgetExceeded)
        if stop is None:
            raise
        raise _first(stop) from None
    finally:
        c.ledger.close_journal(finished)
        run_dir.write_json("usage.json", usage_from_journal(
            run_dir / "usage.jsonl", invocation, c.ledger.price_table_version, c.ledger.prices))
        c.cache.close()
        for key in shared:
            _node_servers().release(key)
    if "score" in stages:
        metrics = score_run(run_dir, c.protocol)
        print((run_dir / "results.md").read_text())
        _health(cfg, run_dir.root, c.dataset)
        log_to_wandb(run_dir, cfg.tracking.mode, cfg.tracking.project,
                     as_dict(cfg, resolve=True, what="the run's config"), metrics, c.ledger.summary(),
                     name=run_dir.root.name, entity=cfg.tracking.entity, tags=list(cfg.tracking.tags),
                     group=cfg.tracking.get("group") or sweep_name(), job_type=c.method_cfg.name)
    fresh = c.ledger.fresh_calls()
    print(f"run folder: {run_dir.root}\nnew model calls this invocation: {fresh}")
    return run_dir.root


def _health(cfg: DictConfig, run: Path, dataset: Any) -> None:
    """health.json beside metrics.json (its own artifact: metrics.json is never touched). A
    config saved before the `health` group (a bundle's replay of an older run) has no
    thresholds: the run is then checked by `memeval health RUN_DIR` alone."""
    thresholds = upgrade_config(cfg).get("health")  # a check added since the run was saved: today's threshold
    if thresholds is None:
        print("health: no thresholds in this config; check the run with `memeval health RUN_DIR`")
        return
    health = write_health(run, as_dict(thresholds, resolve=True, what="health"), dataset)  # not read again
    print(f"health: {health.mark()} (health.json; `memeval health {run}` prints every check)")


def _first(group: BaseExceptionGroup) -> BaseException:
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


async def _execute(cfg: DictConfig, c: Components, run_dir: RunFolder, stages: list[str]) -> None:
    try:
        await _stages(cfg, c, run_dir, stages)
    finally:  # inside the loop: a sweep's next job must not collect this job's open clients
        await c.aclose_clients()


async def _stages(cfg: DictConfig, c: Components, run_dir: RunFolder, stages: list[str]) -> None:
    predictions = run_dir.read_jsonl("predictions.jsonl")
    if "index" in stages or "answer" in stages:
        services = Services(llm=c.llm, embedder=c.embedder, cap=c.cap, store_root=Path("."), index_llm=c.index_llm)
        method: MemoryMethod = instantiate(c.method_cfg, _partial_=True)(services=services)
        services.store_root = index_store_root(c, method.params())
        try:  # runs sharing an index folder take turns: two writers would interleave its files
            with FolderLock(services.store_root, "index folder", wait_s=cfg.lock_wait_s):
                indexes = await index_stage(c, method, run_dir)
                if "answer" in stages:
                    predictions = await answer_stage(c, method, indexes, run_dir, cfg.concurrency.questions)
        finally:
            method.close()
    if "judge" in stages:
        if not predictions:
            raise FileNotFoundError(f"no predictions in {run_dir.root}: run the answer stage first")
        await judge_stage(c, predictions, run_dir, cfg.concurrency.questions)
