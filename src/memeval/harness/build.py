"""Builds every component a run needs from the composed config, and checks it before any call."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.utils import get_class, instantiate
from omegaconf import DictConfig, OmegaConf

from memeval.datasets.subset import draw, first_units
from memeval.datasets.types import ContextCap, Dataset, Question
from memeval.evaluation.protocol import Protocol
from memeval.evaluation.runs.folder import config_hash
from memeval.evaluation.runs.upgrade import identity_view, upgrade_config, with_current_paths
from memeval.model_access.budget import Budget
from memeval.model_access.cache import CacheBase
from memeval.model_access.cache_store import open_cache
from memeval.model_access.chat import ChatModel
from memeval.model_access.embed import Embedder
from memeval.model_access.errors import ConfigError
from memeval.model_access.gate import CallSettings
from memeval.model_access.usage import Price, UsageLedger

from .config_data import as_dict
from .plugin import check_params, method_code, outside_core_code
from .reference import check_scope
from .replay import active_replay


@dataclass
class Components:
    dataset: Dataset
    questions: list[Question]
    protocol: Protocol
    cap: ContextCap
    llm: ChatModel
    judge: ChatModel
    embedder: Embedder
    ledger: UsageLedger
    cache: CacheBase
    method_cfg: DictConfig
    run_dir: Path
    index_root: Path
    subset_label: str
    pool: list[Question] = field(default_factory=list)  # what the subset was drawn from (its population)
    index_units: int | None = None  # subset.index_units: every corpus cut to its first N units
    index_llm: ChatModel | None = None  # the indexing model; None = the answering model (`indexer`)
    method_code: dict[str, Any] | None = None  # meta.json `method_code`: the plugin's source hash (harness/plugin.py)

    @property
    def indexer(self) -> ChatModel:
        """The model every method's index-time calls go to (llm_index; the answering model by default)."""
        return self.index_llm or self.llm

    def clients(self) -> list[Any]:
        """Every model client of the run, each once (the indexer only when it is its own)."""
        return [self.llm, *([self.index_llm] if self.index_llm is not None else []), self.judge, self.embedder]

    async def aclose_clients(self) -> None:
        """Close the models' HTTP clients made on the running loop; await it in that loop before
        `asyncio.run` returns (model_access.loop_clients says what a client left open does)."""
        for component in self.clients():
            await component.aclose()


def _ledger(cfg: DictConfig) -> UsageLedger:
    table = as_dict(cfg.prices.models, resolve=True, what="prices.models")
    prices = {name: Price(**spec) for name, spec in table.items()}
    return UsageLedger(prices=prices, price_table_version=str(cfg.prices.version))


def _cap(cfg: DictConfig, dataset: Dataset) -> ContextCap:
    units = cfg.context_cap.units if cfg.context_cap.units is not None else dataset.natural_cap.max_units
    tokens = cfg.context_cap.tokens if cfg.context_cap.tokens is not None else dataset.natural_cap.max_tokens
    overridden = cfg.context_cap.units is not None or cfg.context_cap.tokens is not None
    source = "run override (context_cap)" if overridden else dataset.natural_cap.source
    return ContextCap(max_units=units, max_tokens=tokens, source=source)


PROMPT_ALLOWANCE = 1000  # tokens of answer prompt and question beside the context (o200k estimate)


def _check_window(cap: ContextCap, llm: ChatModel, name: str) -> None:
    """A cap whose contexts the answering model cannot take fails before any paid call: on the
    local 1.5B's 16k slots LongMemEval's 22k cap cut Vanilla's haystacks and stopped Embedding RAG
    on an 18k request mid-run (docs/BUNDLES_V2.md)."""
    window = llm.context_window
    if cap.max_tokens is None or not window:
        return
    need = cap.max_tokens + int(llm.max_tokens or 0) + PROMPT_ALLOWANCE
    if need > window:
        raise ConfigError(
            f"the context cap allows {cap.max_tokens} tokens of context; with the reply ({llm.max_tokens}) and "
            f"the prompt (about {PROMPT_ALLOWANCE}) that is {need} tokens, more than the answering model's window "
            f"({name}: llm.context_window={window}), so long contexts would be cut or refused. Serve a larger "
            f"window (the local server: llm.context_window=32768 llm.max_concurrency=2, the same server context "
            f"in two slots) or lower the cap (context_cap.tokens=N).")


def _batch_queue(cfg: DictConfig) -> Any:
    """The run's Batch API queue (model_access.batch) when `batch.stages` names any, else None."""
    if not cfg.batch.stages:
        return None
    from memeval.model_access.batch import BatchQueue

    if not cfg.cache_path:
        raise ConfigError("batch.stages needs a persistent cache (set cache_path): batches are "
                          "collected into it and a killed run resumes from its journal")
    folder = Path(cfg.cache_path) if cfg.cache_backend == "directory" else Path(cfg.cache_path).parent
    return BatchQueue(folder / "batches", list(cfg.batch.stages), cfg.batch.poll_s, cfg.batch.settle_s)


def _resume_hint() -> str:
    """`python run.py <this run's overrides>` when Hydra is running us, else a generic phrase."""
    try:
        from hydra.core.hydra_config import HydraConfig

        overrides = [o for o in HydraConfig.get().overrides.task if not o.startswith("budget.usd=")]
        return "`python run.py " + " ".join(overrides) + "`"
    except (ImportError, ValueError):
        return "the same command"


MODEL_IDENTITY = ("_target_", "model", "model_revision", "json_mode", "max_tokens")


def own_index_model(cfg: DictConfig) -> bool:
    """Whether the run indexes with a model of its own: an `llm_index` that is not the answering
    model (a config saved before llm_index existed has none: its answering model indexed)."""
    node = cfg.get("llm_index")
    if node is None:
        return False
    return OmegaConf.to_container(node, resolve=True) != OmegaConf.to_container(cfg.llm, resolve=True)


def _location_params(method: Any) -> tuple[str, ...]:
    """The method class's `location_params` (none when its class cannot be imported here)."""
    target = method.get("_target_") if isinstance(method, dict) else None
    if not target:
        return ()
    try:
        cls = get_class(str(target))
    except (ImportError, AttributeError, ValueError):
        return ()
    return tuple(getattr(cls, "location_params", ()))


def identity(cfg: DictConfig) -> dict[str, Any]:
    """Everything that changes a run's numbers, as written in the config (never the upgraded
    reading of a saved one); hashed into the run folder name through the upgrade module's view
    (an indexing model that is the answering model, and the fair experiment, hash as absent)."""
    cfg = with_current_paths(cfg)  # classes are imported by today's path, hashed by their first
    pick: dict[str, Any] = {k: OmegaConf.to_container(cfg[k], resolve=True)  # each as written: hashed as is
                            for k in ("method", "dataset", "context_cap", "subset")}
    for key in _location_params(pick["method"]):  # where an input lives is not what it holds
        pick["method"].pop(key, None)
    for k in ("llm", "llm_index", "judge", "embedder"):
        if k not in cfg:  # llm_index: a config saved before it
            continue
        node = as_dict(cfg[k], resolve=True, what=k)
        pick[k] = {f: node.get(f) for f in MODEL_IDENTITY}
    if "experiment" in cfg:
        pick["experiment"] = str(cfg.experiment.name)
    code = outside_core_code(str(pick["method"].get("_target_") or "")) if isinstance(pick["method"], dict) else None
    if code is not None:  # a plugin outside methods/: its code, not memeval's commit, says what ran
        pick["method_code"] = code
    return identity_view(pick)


def _subset_label(cfg: DictConfig, dataset: Any, questions: list[Any], pool: list[Any], filters: list[str]) -> str:
    """How the run's questions were chosen, as every table names them."""
    if len(questions) < len(pool):
        extra = cfg.subset.get("extra")
        more = "".join(f"; {v} more in {k}" for k, v in extra.items()) if extra else ""
        how = "chosen by id (subset.ids)" if cfg.subset.ids else \
            f"(stratified by {dataset.strata_key}, seed {cfg.subset.seed}{more})"
        label = f"{len(questions)} of {len(dataset.questions)} {how}"
    else:
        label = f"all {len(pool)} of {len(dataset.questions)}" if filters else "all"
    return label + (f"; {'; '.join(filters)}" if filters else "")


def _code_meta(method_cfg: DictConfig) -> dict[str, Any] | None:
    code = method_code(str(method_cfg.get("_target_") or ""))
    return None if code is None else code.meta()


def build(cfg: DictConfig, check: bool = True, dry: Any = None) -> Components:
    """Load data and instantiate models; raise ConfigError before any model call if unusable.

    `check=False` skips the API-key checks. `dry` (a cost estimate's DryRecorder) is given to
    every client: fresh calls are counted, never sent, so no key is checked either.
    """
    cfg = with_current_paths(cfg)  # a saved config names classes by their paths before the namespace
    upgraded = upgrade_config(cfg)  # a saved config's missing keys mean what they meant then
    if problem := check_params(upgraded.method):  # a typo'd parameter: refused before any run folder exists
        raise ConfigError(problem)
    check_scope(cfg)  # a run its experiment's reference does not hold is refused (harness/reference.py)
    dataset: Dataset = instantiate(cfg.dataset.loader).load()
    if cfg.subset.get("index_units") is not None:
        try:
            dataset = first_units(dataset, int(cfg.subset.index_units))
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
    protocol: Protocol = instantiate(upgraded.dataset.protocol)
    subset = as_dict(cfg.subset, resolve=True, what="subset")
    try:
        questions, pool, filters = draw(dataset, subset)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    if not questions:
        raise ConfigError("The question subset is empty; check subset.n / subset.ids / subset.name / "
                          "subset.within_units.")
    cache = open_cache(cfg.cache_path, cfg.cache_backend)
    replay = active_replay()  # a bundle's export/verify: record every read, refuse every fresh call
    if replay is not None:
        cache = replay.wrap(cache)
    ledger = _ledger(cfg)
    budget = Budget(cfg.budget.usd, ledger.cost, resume_hint=_resume_hint())
    dry = dry if dry is not None else replay  # nothing is sent, so no key or endpoint is needed
    chat_settings = CallSettings(budget, dry, _batch_queue(cfg))
    make = {"cache": cache, "ledger": ledger}
    llm: ChatModel = instantiate(cfg.llm, _partial_=True)(**make, settings=chat_settings)
    # an indexing model of its own gets its own client (cache keys, usage line, server); else the
    # answering model's client indexes, with one concurrency bound for both as before
    index_llm: ChatModel | None = (instantiate(cfg.llm_index, _partial_=True)(**make, settings=chat_settings)
                                   if own_index_model(cfg) else None)
    cap = _cap(cfg, dataset)
    _check_window(cap, llm, str(cfg.llm.model))
    judge: ChatModel = instantiate(cfg.judge, _partial_=True)(**make, settings=chat_settings)
    embedder: Embedder = instantiate(cfg.embedder, _partial_=True)(**make, settings=CallSettings(budget, dry))
    clients: list[ChatModel | Embedder] = [llm, *([index_llm] if index_llm is not None else []), judge, embedder]
    for component in clients:
        if dry is None and check:
            component.check_ready()
    ident = identity(cfg)
    run_name = cfg.run_name or f"{cfg.method.name}-{config_hash(ident)}"
    run_dir = Path(cfg.output_root) / dataset.name / run_name
    subset_label = _subset_label(cfg, dataset, questions, pool, filters)
    return Components(dataset, questions, protocol, cap, llm, judge, embedder, ledger,
                      cache, upgraded.method, run_dir, Path(cfg.index_root), subset_label, pool=pool,
                      index_llm=index_llm, method_code=_code_meta(upgraded.method),
                      index_units=None if cfg.subset.get("index_units") is None else int(cfg.subset.index_units))
