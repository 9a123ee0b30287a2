"""Saved runs, read as today's code reads them: the one place that reads what older runs meant.

The inspect_ai way: a run folder is never rewritten; it is migrated on read. Two formats are
stamped (absent = 0, every folder made before this module):
- `run_format` in config.yaml: what a config means. Code defaults now equal the shipped
  defaults, so a config that lacks a key its method's or protocol's class gained later gets the
  value that key's absence meant when the run was made, before anything is instantiated from
  it. Each class declares its own history (`settings_history`, memeval/settings_history.py:
  the key, what its absence meant, and from which format on every config has it, or None: a key
  added after the last format change fills a config of any format that lacks it); this module
  names no method or dataset, and a third party's class is read the same way.
- `run_format` in meta.json: how the artifacts are laid out. Format 0 kept per-question
  diagnostics inside judgments.jsonl and wrote no `presentation` block into metrics.json;
  format-0 protocol descriptions left out keys the protocol's class fills back
  (`Protocol.upgrade_description`, found by the description's protocol name through the plugin
  registry). Formats 0 and 1 recorded no dataset facts in meta.json (`population`,
  `gold_audit`: datasets/facts.py) and wrote no `statistics`, `gold_audit` or `stratified` block
  (evaluation/runs/blocks.py): their facts are read from the benchmark data (`recorded_facts`)
  and the blocks computed from their artifacts with the score stage's own functions; their
  `statistics` says their intervals resampled questions, which is what every score stage
  before format 2 did.
Format 3 changed what a config means only (issue 26: a method's and two protocols' new
defaults; a config below 3 without those keys means the behaviour before them); its artifacts
are laid out as format 2's.
A newer format than this code knows is refused (`FormatError`), never guessed at.

Folder names and index folders hash the config as it is written (`identity_view`): a few keys
joined the identity after runs were named without them, and at the value they had then they
still hash as absent (the run identity's `SUBSET_AS_ABSENT` and `RUN_KEYS_AS_ABSENT`; a method's
index parameters by its class's `settings_history`), and a moved class hashes under its first
path (`MOVED`). So saved runs keep their folder names, index folders and cache keys.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from memeval import plugins
from memeval.model_access.errors import ConfigError
from memeval.settings_history import Record, hashed_as_absent, introduced

from .health_file import load_thresholds
from .records import DIAGNOSTIC_KEYS, upgraded_judgment, upgraded_meta, upgraded_metrics

RUN_FORMAT = 3  # 3: issue 26's settings (Introduced until_format=3); artifacts laid out as in 2

# The framework's packages were top-level (`methods.<module>.<Class>`) until issue 60 moved them under
# one namespace (`memeval.methods.<module>.<Class>`): a saved config's class paths are read with the
# namespace added, and run and index identities hash every class under its first path, so no
# folder name or cache key changed with the move.
NAMESPACE = "memeval."
TOP_LEVEL_BEFORE = ("model_access.", "harness.", "methods.", "datasets.", "evaluation.", "cli.")

# the config nodes whose class declares a settings history: the method and the protocol
HISTORY_NODES = ("method", "dataset.protocol")

# (key, value): keys of the run identity's subset node that hash as absent at this value (runs
# were named before the key joined the identity)
SUBSET_AS_ABSENT = (("name", None), ("within_units", None), ("index_units", None), ("extra", None))


class FormatError(ValueError):
    """A run folder written by a newer version of this framework."""


def _check(fmt: int, where: str) -> int:
    if fmt > RUN_FORMAT:
        raise FormatError(f"{where} has run_format {fmt}, newer than this code's {RUN_FORMAT}: "
                          "update memeval (git pull) to read it")
    return fmt


def config_format(cfg: DictConfig | dict[str, Any]) -> int:
    value = cfg.get("run_format")
    return _check(int(value) if value is not None else 0, "this run config")


def current_target(target: Any) -> Any:
    """Today's path of a class a saved config names: the namespace added to a path saved before
    it; a path no module holds any more is looked up in the registered plugins' `former_paths`."""
    if not isinstance(target, str) or not target.startswith(TOP_LEVEL_BEFORE):
        return target
    path = NAMESPACE + target
    return path if _resolves(path) else _former_paths().get(target, path)


def first_target(target: Any) -> Any:
    """The path a class was first saved under: what run and index identities hash (the first of
    the class's own `former_paths`, else its path without the namespace)."""
    if not isinstance(target, str):
        return target
    bare = target.removeprefix(NAMESPACE)
    if not bare.startswith(TOP_LEVEL_BEFORE):
        return target
    cls = class_at(bare)
    former = cls.__dict__.get("former_paths", ()) if cls is not None else ()
    return former[0] if former else bare


@functools.cache
def _resolves(path: str) -> bool:
    """Whether a dotted path names an attribute of an importable module (without Hydra's logging)."""
    import importlib

    module, _, attr = path.rpartition(".")
    try:
        return hasattr(importlib.import_module(module), attr)
    except ImportError:
        return False


@functools.cache
def _former_paths() -> dict[str, str]:
    """former path -> today's, from every registered plugin class that declares former paths."""
    out: dict[str, str] = {}
    for kind in plugins.GROUPS:
        paths = plugins.registered(kind)
        for name, cls in plugins.loadable(kind).items():
            out |= {old: paths[name].class_path for old in cls.__dict__.get("former_paths", ())}
    return out


_CLASSES: dict[str, type] = {}


def class_at(target: Any) -> type | None:
    """The class at a saved config's `_target_` (mapped to today's path), or None when it is not
    a class importable here (a plugin not installed on this machine: its runs still read, with
    nothing of its history applied, as before its class declared any)."""
    if not isinstance(target, str):
        return None
    path = current_target(target)
    if path not in _CLASSES:
        if not _resolves(path):
            return None
        from hydra.utils import get_class

        try:
            _CLASSES[path] = get_class(path)
        except (ImportError, ValueError):
            return None
    return _CLASSES[path]


def settings_history(target: Any) -> tuple[Record, ...]:
    """The settings history the class at `target` declares (empty for none or no class)."""
    return tuple(getattr(class_at(target), "settings_history", ()))


def _map_targets(node: Any, path_of: Callable[[Any], Any]) -> Any:
    if isinstance(node, dict):
        return {k: path_of(v) if k == "_target_" else _map_targets(v, path_of) for k, v in node.items()}
    if isinstance(node, list):
        return [_map_targets(v, path_of) for v in node]
    return node


def with_current_paths(cfg: DictConfig) -> DictConfig:
    """A config as written (no key added, interpolations kept) with every class path today's."""
    data = OmegaConf.to_container(cfg, resolve=False)
    return OmegaConf.create(_map_targets(data, current_target))


def _node(cfg: dict[str, Any], path: str) -> dict[str, Any] | None:
    node: Any = cfg
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def upgrade_config(cfg: DictConfig | dict[str, Any]) -> DictConfig:
    """The config as today's code must read it: moved class paths mapped, and every introduced
    key a config of an older format lacks set to what its absence meant. Returns a copy."""
    fmt = config_format(cfg)
    data = OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else copy.deepcopy(cfg)
    assert isinstance(data, dict)
    data = _map_targets(data, current_target)
    for path in HISTORY_NODES:
        node = _node(data, path)
        if node is not None:
            for key, before in introduced(settings_history(node.get("_target_")), fmt):
                node.setdefault(key, before)
    if isinstance(data.get("health"), dict):
        data["health"] = _with_new_checks(data["health"])
    return OmegaConf.create(data)


def _with_new_checks(saved: dict[str, Any]) -> dict[str, Any]:
    """Saved health thresholds, plus today's for checks added after the run was saved (health
    is judged by today's code; a check the run's config predates has no saved threshold)."""
    def merge(current: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
        return {**current, **{k: merge(current[k], v) if isinstance(v, dict) and isinstance(current.get(k), dict)
                              else v for k, v in old.items()}}

    return merge(load_thresholds(), saved)


# run identity keys that joined it later, hashed as absent at the value their absence meant:
# the fair experiment (every run before experiments were named), and an indexing model that is
# the answering model (before llm_index, the answering model indexed)
RUN_KEYS_AS_ABSENT: tuple[tuple[str, Callable[[dict[str, Any]], Any]], ...] = (
    ("experiment", lambda ident: "fair"),
    ("llm_index", lambda ident: ident.get("llm")),
)


def identity_view(ident: dict[str, Any]) -> dict[str, Any]:
    """The run identity as it is hashed into the folder name (see the module docstring)."""
    out = copy.deepcopy(ident)
    for key, then in RUN_KEYS_AS_ABSENT:
        if key in out and out[key] == then(out):
            del out[key]
    out = _map_targets(out, first_target)
    out.pop("run_format", None)
    if isinstance(out.get("subset"), dict):
        out["subset"] = _absent(out["subset"], SUBSET_AS_ABSENT)
    return out


def index_identity_view(target: str, params: dict[str, Any]) -> dict[str, Any]:
    """A method's index parameters as they are hashed into its index folder name: those its
    class's settings history says joined the index identity later, at their value of then, left out."""
    return _absent(dict(params), hashed_as_absent(settings_history(target)))


def _absent(node: dict[str, Any], as_absent: Any) -> dict[str, Any]:
    for key, value in as_absent:
        if key in node and node[key] == value:
            del node[key]
    return node


# -- artifacts -------------------------------------------------------------------------------

def artifacts_format(meta: dict[str, Any], where: str = "meta.json") -> int:
    return _check(int(meta.get("run_format", 0)), where)


DescriptionHook = Callable[[dict[str, Any], int], dict[str, Any]]


def _description_hook(name: Any) -> DescriptionHook | None:
    """`upgrade_description` of the protocol class a saved description names (its `protocol`
    key, the class's `name`; plugins.class_named)."""
    hook = getattr(plugins.class_named("protocol", name), "upgrade_description", None)
    return hook if callable(hook) else None


def upgrade_protocol_description(proto: Any, fmt: int = 0) -> Any:
    """An older `protocol` description (meta.json, metrics.json provenance) as today's describe()
    writes it: completed by its protocol class's `upgrade_description` for artifacts format
    `fmt` (called for every format: a key added after the last format change is missing from
    descriptions of any format). Returns a copy; a protocol not installed here: as saved."""
    if not isinstance(proto, dict):
        return proto
    hook = _description_hook(proto.get("protocol"))
    return dict(hook(proto, fmt)) if hook is not None else dict(proto)


def upgrade_meta(meta: dict[str, Any], where: str = "meta.json") -> dict[str, Any]:
    """meta.json as today's code reads it: the typed record's own migrations (records.Meta), with
    an older protocol description completed by its protocol class."""
    artifacts_format(meta, where)  # a newer format than this code knows is refused here
    return upgraded_meta(meta, upgrade_protocol_description)


def upgrade_metrics(metrics: dict[str, Any], meta: dict[str, Any],
                    presentation: dict[str, Any] | None = None,
                    blocks: Callable[[], dict[str, Any]] | None = None) -> dict[str, Any]:
    """metrics.json of an older run as today's score stage writes it (records.Metrics: the
    protocol description completed; format 0's `presentation` block, given by the caller, which
    has the run's protocol; before format 2 the statistics blocks, computed by `blocks` unless
    the file has them)."""
    return upgraded_metrics(metrics, artifacts_format(meta), upgrade_protocol_description, presentation, blocks)


def recorded_facts(run: Path, meta: dict[str, Any], run_ids: set[str],
                   data_dir: Path | None = None) -> dict[str, Any]:
    """The dataset facts the score stage reads (datasets/facts.py): meta.json's own from format
    2 on; for an older run, computed from the benchmark data its saved loader reads (at
    `data_dir` when given, else the saved path if it exists, else $MEMEVAL_DATA). A population
    behind a named subset or a gold-unit bound (harness filters) is not recomputed: None; nor are
    facts whose benchmark data is not on this machine (the tables then say they are unknown)."""
    if artifacts_format(meta) >= 2:  # `repeats` absent: recorded before it was (no block, as then)
        return {"population": meta.get("population"), "gold_audit": meta.get("gold_audit"),
                "repeats": meta.get("repeats")}
    from memeval.datasets.facts import dataset_facts

    dataset = saved_dataset(run, data_dir)
    if dataset is None:  # no benchmark data here (a bundle read elsewhere), or no loader saved:
        return {"population": None, "gold_audit": None}  # the blocks then say the facts are unknown
    cfg = read_config(run)
    subset = cfg.get("subset") or {}
    filtered = bool(subset.get("name")) or subset.get("within_units") is not None
    return dataset_facts(dataset, None if filtered else dataset.questions, run_ids)


def saved_dataset(run: Path, data_dir: Path | None = None, as_indexed: bool = False) -> Any:
    """The benchmark data the run's saved loader reads (at `data_dir` when given, else the saved
    path if it exists, else $MEMEVAL_DATA); None when the config names no loader or the data is
    not on this machine. `as_indexed`: cut to the first units the run indexed
    (`subset.index_units`), as the runner cut it: what the run's index and contexts came from."""
    cfg = read_config(run)
    data = _saved_dataset(cfg, data_dir)
    cut = (cfg.get("subset") or {}).get("index_units")
    if data is not None and as_indexed and cut is not None:
        from memeval.datasets.subset import first_units

        data = first_units(data, int(cut))
    return data


def _saved_dataset(cfg: DictConfig, data_dir: Path | None) -> Any:
    loader = OmegaConf.to_container(cfg.dataset.loader, resolve=True) if "loader" in cfg.get("dataset", {}) else None
    if not isinstance(loader, dict):
        return None
    saved = loader.get("data_dir")
    if data_dir is not None or (saved is not None and not Path(str(saved)).exists()):
        loader["data_dir"] = str(data_dir or os.environ.get("MEMEVAL_DATA") or saved)
    try:
        return _load_dataset(json.dumps(loader, sort_keys=True))
    except (ConfigError, FileNotFoundError):
        return None


@functools.lru_cache(maxsize=8)
def _load_dataset(loader_json: str) -> Any:
    """One load per loader config (a report reads every old run of a dataset through here)."""
    from hydra.utils import instantiate

    return instantiate(json.loads(loader_json)).load()


def question_diagnostics(run: Path) -> dict[str, dict[str, Any]]:
    """question_id -> the score stage's per-question diagnostics and failure label: from
    diagnostics.jsonl, or (format 0) from the keys the score stage wrote into judgments.jsonl."""
    from .folder import RunFolder

    folder = RunFolder(Path(run))
    if folder.has("diagnostics.jsonl"):
        return {r["question_id"]: {k: r.get(k) for k in DIAGNOSTIC_KEYS}
                for r in folder.read_jsonl("diagnostics.jsonl")}
    return {j["question_id"]: upgraded_judgment(j, 0)[1]
            for j in folder.read_jsonl("judgments.jsonl") if "failure_label" in j}


def read_meta(run: Path) -> dict[str, Any]:
    path = Path(run) / "meta.json"
    return _subset_by_id(Path(run), upgrade_meta(json.loads(path.read_text(encoding="utf-8")), str(path)))


def _subset_by_id(run: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """Runs made before 2026-12-02 with `subset.ids` labelled their questions "stratified by
    <key>, seed <s>" although the ids chose them (any format): read as today's label."""
    label = meta.get("subset")
    if not (isinstance(label, str) and " (stratified by " in label and (run / "config.yaml").exists()):
        return meta
    if not (_load_yaml(run / "config.yaml").get("subset") or {}).get("ids"):
        return meta
    head, _, rest = label.partition(" (stratified by ")
    tail = rest.partition(")")[2]
    return {**meta, "subset": f"{head} chosen by id (subset.ids){tail}"}


def _load_yaml(path: Path) -> DictConfig:
    cfg = OmegaConf.load(path)
    if not isinstance(cfg, DictConfig):
        raise ConfigError(f"{path} is not a run config (a mapping)")
    return cfg


def read_config(run: Path) -> DictConfig:
    return upgrade_config(_load_yaml(Path(run) / "config.yaml"))
