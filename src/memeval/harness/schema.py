"""Structured-config schemas: a typo or a wrong type in an override fails before anything runs.

Top-level keys and the model-client groups are typed; method and dataset nodes are checked by
Hydra's struct mode (unknown keys fail) and by their classes' constructors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig, OmegaConf

from memeval.evaluation.runs.upgrade import RUN_FORMAT
from memeval.model_access.errors import ConfigError


@dataclass
class ContextCapConfig:
    units: int | None = None
    tokens: int | None = None


@dataclass
class SubsetConfig:
    n: int | None = None  # the value lives in conf/config.yaml
    seed: int = 0
    ids: list[str] | None = None
    name: str | None = None  # a named subset a loader declares (`named_subsets`)
    within_units: int | None = None  # only questions whose gold units are all in the first N units
    index_units: int | None = None  # index only each corpus' first N units (questions: gold within them)
    extra: Any = None  # {stratum: k}: k more questions there beyond n's even spread


@dataclass
class ConcurrencyConfig:
    questions: int = 8


@dataclass
class BudgetConfig:
    usd: float | None = None  # stop before the call that would take this invocation over it


@dataclass
class BatchConfig:
    stages: list[str] = field(default_factory=list)  # e.g. [judge] or [index, judge]: OpenAI Batch API
    poll_s: float = 30.0
    settle_s: float = 2.0  # submit once no call has been queued for this long


@dataclass
class TrackingConfig:
    mode: str = "offline"
    project: str = "memeval"
    entity: str | None = None
    tags: list[str] = field(default_factory=list)
    group: str | None = None  # W&B group; default: the sweep's folder name under -m


@dataclass
class ChatModelConfig:
    _target_: str = "memeval.model_access.chat.ChatModel"
    model: str = MISSING
    model_revision: str | None = None
    display_name: str | None = None
    base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    max_concurrency: int = 8
    max_attempts: int = 6
    timeout_s: float = 120.0
    max_tokens: int = 1024
    json_mode: str = "json_schema"
    grammar: str = "auto"  # text-format replies: GBNF on a local llama.cpp (auto) | gbnf | none
    json_repair_attempts: int = 2
    context_window: int | None = None
    seed: int | None = None
    backoff_base_s: float = 1.0
    server: Any = None


@dataclass
class ExperimentConfig:
    """What a run compares under (conf/config.yaml `experiment`, +experiment=paper|fair): named in
    meta.json and every table; `reference` (a published experiment's settings) names deviations."""

    name: str = "fair"
    answer_with: str = "shared"  # the baseline packages' answer prompt (their method configs read it)
    pr_convention: str = "defined_only"  # EpBench P/R (the EpBench dataset configs read it)
    policy: str = "lenient"  # EpBench / custom item scoring rule (the dataset configs read it)
    # per dataset family, the judge version this experiment chooses (conf/config.yaml; the dataset
    # configs read their own entry by interpolation)
    judge_versions: Any = None
    reference: Any = None


@dataclass
class RunConfig:
    run_format: int = RUN_FORMAT  # what this config means (evaluation/runs/upgrade.py); saved configs keep theirs
    method: Any = MISSING
    dataset: Any = MISSING
    llm: ChatModelConfig = MISSING
    llm_index: ChatModelConfig = MISSING  # the indexing model (conf/llm_index/; same = llm itself)
    judge: ChatModelConfig = MISSING
    embedder: Any = MISSING
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    prices: Any = MISSING
    memeval_home: str = MISSING
    data_dir: str = MISSING
    output_root: str = "runs"
    index_root: str = MISSING
    cache_path: str | None = MISSING
    cache_backend: str = "sqlite"
    share_servers: bool = False
    run_name: str | None = None
    lock_wait_s: float = 0.0
    stages: list[str] = field(default_factory=lambda: ["index", "answer", "judge", "score"])
    context_cap: ContextCapConfig = field(default_factory=ContextCapConfig)
    subset: SubsetConfig = field(default_factory=SubsetConfig)
    concurrency: ConcurrencyConfig = field(default_factory=ConcurrencyConfig)
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    batch: BatchConfig = field(default_factory=BatchConfig)
    experiment: ExperimentConfig = field(default_factory=ExperimentConfig)
    health: Any = MISSING  # conf/health/: the thresholds of the run's health checks (evaluation/health)


MODEL_GROUPS = ("llm", "llm_index", "judge", "embedder")  # each names a model the run may call
EXAMPLE_MODEL = {"embedder": "BAAI/bge-small-en-v1.5"}  # any other group: a chat model
CHAT_TARGET = "memeval.model_access.chat.ChatModel"


class MissingModelSetting(ConfigError):
    """A model group lacks the model name or the address its endpoint needs (one line, exit 2)."""


def _missing_message(group: str, key: str) -> str:
    if key == "model":
        example = EXAMPLE_MODEL.get(group, "Qwen/Qwen2.5-7B-Instruct")
        return (f"{group}.model is not set: an OpenAI-compatible endpoint needs the model name it serves, "
                f"e.g. {group}.model={example} (the server's GET /v1/models lists them)")
    if key == "base_url":
        return (f"{group}.base_url is not set: an OpenAI-compatible endpoint needs its address, "
                f"e.g. {group}.base_url=http://localhost:8000/v1")
    return f"{group}.{key} is not set (`???` in its config): give it on the command line, {group}.{key}=..."


def check_model_settings(cfg: DictConfig) -> None:
    """Refuse a run whose model groups leave a required value unset, before anything is built.

    Why here and not at the first call: a `???` in a model group used to be filled from the group
    it extended (OmegaConf keeps the earlier value), so `llm=openai_compatible` without `llm.model`
    ran as GPT-4o and said so in every table. A chat model's `base_url` defaults to null in the
    schema, so it is required here when nothing else gives the address (no local server, not
    OpenAI's own API)."""
    for group in MODEL_GROUPS:
        if group not in cfg:  # llm_index: a config saved before it
            continue
        node = cfg[group]
        if not isinstance(node, DictConfig):
            continue
        keys = list(node.keys())  # `key in node` is False for a `???` value: look among the keys
        for key in ("model", "base_url", *keys):
            if key in keys and OmegaConf.is_missing(node, key):
                raise MissingModelSetting(_missing_message(group, str(key)))
        chat_without_address = (node.get("_target_") == CHAT_TARGET and node.get("base_url") is None
                                and node.get("server") is None and node.get("api_key_env") != "OPENAI_API_KEY")
        if chat_without_address:
            raise MissingModelSetting(_missing_message(group, "base_url"))


def register_schemas(config_dir: Path | None = None) -> None:
    """The run schema, and a method/dataset option per installed plugin that `config_dir` (default:
    the checkout's conf/) has no file for (harness/plugin_configs.py)."""
    from memeval.paths import CONF

    from .plugin_configs import register_plugin_configs

    cs = ConfigStore.instance()
    cs.store(name="run_schema", node=RunConfig)
    register_plugin_configs(config_dir or CONF)
