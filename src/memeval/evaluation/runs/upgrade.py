"""Saved runs, read as today's code reads them: the one place that knows what older runs meant.

The inspect_ai way: a run folder is never rewritten; it is migrated on read. Two formats are
stamped (absent = 0, every folder made before this module):
- `run_format` in config.yaml: what a config means. Code defaults now equal the shipped
  defaults, so a format-0 config that lacks a key gets the value that key's absence meant when
  the run was made (`INTRODUCED`), before anything is instantiated from it; a key added after
  the last format change fills a config of any format that lacks it (`until_format` None).
- `run_format` in meta.json: how the artifacts are laid out. Format 0 kept per-question
  diagnostics inside judgments.jsonl and wrote no `presentation` block into metrics.json;
  format-0 protocol descriptions left out the judge version. Formats 0 and 1 recorded no
  dataset facts in meta.json (`population`, `gold_audit`: datasets/facts.py) and wrote no
  `statistics`, `gold_audit` or `stratified` block (evaluation/runs/blocks.py): their facts are
  read from the benchmark data (`recorded_facts`) and the blocks computed from their artifacts
  with the score stage's own functions; their `statistics` says their intervals resampled
  questions, which is what every score stage before format 2 did.
Format 3 changed what a config means only (issue 26: GSW's conversation frame, session dates,
space-time inheritance, kind checks and summary budget; EpBench's order judge version and P/R
convention; LoCoMo's answer prompt version: a config below 3 without those keys means the
behaviour before them, e.g. the order judge that saw the answer); its artifacts are laid out as
format 2's.
A newer format than this code knows is refused (`FormatError`), never guessed at.

Folder names and index folders hash the config as it is written (`identity_view`): a few keys
joined the identity after runs were named without them, and at the value they had then they
still hash as absent (`HASHED_AS_ABSENT`), and a moved class hashes under its first path
(`MOVED`). So saved runs keep their folder names, index folders and cache keys.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from memeval.model_access.errors import ConfigError

from ..conversations.locomo import CATEGORY_5_BY_JUDGE, JUDGE_PROMPTS
from .health_file import load_thresholds

RUN_FORMAT = 3  # 3: GSW's issue-26 settings (INTRODUCED until_format=3); artifacts laid out as in 2

# The framework's packages were top-level (`methods.gsw.method.GSW`) until issue 60 moved them under
# one namespace (`memeval.methods.gsw.method.GSW`): a saved config's class paths are read with the
# namespace added, and run and index identities hash every class under its first path, so no
# folder name or cache key changed with the move.
NAMESPACE = "memeval."
TOP_LEVEL_BEFORE = ("model_access.", "harness.", "methods.", "datasets.", "evaluation.", "cli.")

EPBENCH = "memeval.evaluation.epbench.protocol.EpBenchProtocol"
LOCOMO = "memeval.evaluation.conversations.locomo.LoCoMoProtocol"
LONGMEMEVAL = "memeval.evaluation.conversations.longmemeval.LongMemEvalProtocol"
CUSTOM = "memeval.evaluation.custom.CustomProtocol"
GSW = "memeval.methods.gsw.method.GSW"
SEEM = "memeval.methods.seem.method.SEEM"
GRAPHRAG = "memeval.methods.external.graphrag.GraphRAGMethod"
GRAPHITI = "memeval.methods.external.graphiti.GraphitiMethod"
COGNEE = "memeval.methods.external.cognee.CogneeMethod"

# class paths saved in configs before evaluation/ had family subpackages -> the next path (both
# before the namespace)
MOVED = {
    "evaluation.epbench.EpBenchProtocol": "evaluation.epbench.protocol.EpBenchProtocol",
    "evaluation.locomo.LoCoMoProtocol": "evaluation.conversations.locomo.LoCoMoProtocol",
    "evaluation.longmemeval.LongMemEvalProtocol": "evaluation.conversations.longmemeval.LongMemEvalProtocol",
}
_FIRST_PATH = {new: old for old, new in MOVED.items()}

_LOCOMO_JUDGE_VERSIONS = {prompt: version for version, prompt in JUDGE_PROMPTS.items()}


class FormatError(ValueError):
    """A run folder written by a newer version of this framework."""


@dataclass(frozen=True)
class Introduced:
    """A setting added after runs were made without it: `before` is what its absence meant.

    `until_format`: the config format from which every saved config has the key (1 for the
    settings that predate run_format). None: the key came after the last format change, so a
    config of any format that lacks it was saved before it existed (saved configs are the
    resolved config, which holds every key of its day), and gets `before`."""

    node: str  # "method" or "dataset.protocol"
    target: str  # the class whose parameter it is
    key: str
    before: Any
    until_format: int | None = 1


INTRODUCED = (
    Introduced("dataset.protocol", EPBENCH, "judge_version", 1),
    Introduced("dataset.protocol", LOCOMO, "judge_version", 1),
    Introduced("dataset.protocol", EPBENCH, "grounding_version", 1),
    Introduced("dataset.protocol", LOCOMO, "grounding_version", 1),
    Introduced("dataset.protocol", CUSTOM, "grounding_version", 1),
    Introduced("dataset.protocol", LONGMEMEVAL, "grounding_version", 1, until_format=None),
    Introduced("method", SEEM, "frame_sources", "any_kept"),
    Introduced("method", SEEM, "frame_dates", "as_extracted"),
    Introduced("method", GSW, "stop_repeats", False),
    Introduced("method", GRAPHRAG, "community_report_max_tokens", None),
    # issue 26 (run format 3): GSW's conversation frame, session dates, space-time inheritance,
    # kind checks and the paper's summary budget; saved runs keep the behaviour they were made with
    Introduced("method", GSW, "speaker_frame", False, until_format=3),
    Introduced("method", GSW, "unit_dates", False, until_format=3),
    Introduced("method", GSW, "space_time_join", "since", until_format=3),
    Introduced("method", GSW, "validate_kinds", False, until_format=3),
    Introduced("method", GSW, "summary_version", 1, until_format=3),
    # SEEM, issue 26: the same-event-first judge, the veto before it, the frame retry
    Introduced("method", SEEM, "prompt_version", 2, None),
    Introduced("method", SEEM, "fusion_veto_days", None, None),
    Introduced("method", SEEM, "frame_retry", False, None),
    # issue 27: GSW's compact wire format (Operator and space-time replies as lines); saved runs
    # were made with JSON replies
    Introduced("method", GSW, "wire", "json", None),
    # format 3: the order judge sees only the gold list and the judge's items; EpBench P/R
    # convention (None: defined_only, unnamed in metrics.json); LoCoMo's answer example in a turn of its own
    Introduced("dataset.protocol", EPBENCH, "order_judge_version", 1, until_format=3),
    Introduced("dataset.protocol", EPBENCH, "pr_convention", None, until_format=3),
    Introduced("dataset.protocol", LOCOMO, "answer_prompt_version", 1, until_format=3),
    # issue 28: an undated unit (an EpBench chapter) takes the date its text writes; saved runs
    # gave every undated unit a synthetic day
    Introduced("method", GRAPHITI, "episode_dates", "synthetic", None),
    Introduced("method", COGNEE, "episode_dates", "synthetic", None),
    # issue 30: GraphRAG's text units start with their unit's title (a LoCoMo session's date);
    # saved runs chunked the text alone
    Introduced("method", GRAPHRAG, "unit_titles", False, None),
)

# No entry for EpBench's judge_version 3 or for the policy the experiment now chooses
# (`experiment.policy`, `experiment.epbench_judge_version`, read by the dataset configs by
# interpolation): a saved config is resolved, so it holds the literal policy and judge version it
# ran with, and its identity (hence its folder name) is what it was.

# (where, key, value): identity keys that hash as absent at this value (runs were named before
# the key joined the identity). "subset": the run identity's subset node; a class path: that
# method's index parameters (MemoryMethod.params)
HASHED_AS_ABSENT = (
    ("subset", "name", None),
    ("subset", "within_units", None),
    ("subset", "index_units", None),
    ("subset", "extra", None),
    (GSW, "chunk_min_words", None),
    (GSW, "stop_repeats", False),
    (GRAPHRAG, "community_report_max_tokens", None),
    (GRAPHRAG, "unit_titles", False),
    (GSW, "speaker_frame", False),
    (GSW, "unit_dates", False),
    (GSW, "space_time_join", "since"),
    (GSW, "validate_kinds", False),
    (GSW, "summary_version", 1),
    (SEEM, "passage_turns", None),
    (SEEM, "frame_retry", None),  # params() holds the retry prompt's version, None when off
    (SEEM, "fusion_veto_days", None),
    (GSW, "wire", "json"),
    (GRAPHITI, "episode_dates", "synthetic"),
    (COGNEE, "episode_dates", "synthetic"),
)


def _check(fmt: int, where: str) -> int:
    if fmt > RUN_FORMAT:
        raise FormatError(f"{where} has run_format {fmt}, newer than this code's {RUN_FORMAT}: "
                          "update memeval (git pull) to read it")
    return fmt


def config_format(cfg: DictConfig | dict[str, Any]) -> int:
    value = cfg.get("run_format")
    return _check(int(value) if value is not None else 0, "this run config")


def current_target(target: Any) -> Any:
    """Today's path of a class a saved config names."""
    if not isinstance(target, str):
        return target
    target = MOVED.get(target, target)
    return NAMESPACE + target if target.startswith(TOP_LEVEL_BEFORE) else target


def first_target(target: Any) -> Any:
    """The path a class was first saved under: what run and index identities hash."""
    if not isinstance(target, str):
        return target
    if target.startswith(NAMESPACE) and target[len(NAMESPACE):].startswith(TOP_LEVEL_BEFORE):
        target = target[len(NAMESPACE):]
    return _FIRST_PATH.get(target, target)


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
    for rule in INTRODUCED:
        if rule.until_format is not None and fmt >= rule.until_format:
            continue
        node = _node(data, rule.node)
        if node is not None and node.get("_target_") == rule.target and rule.key not in node:
            node[rule.key] = rule.before
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
    return _absent(out, "subset", "subset")


def index_identity_view(target: str, params: dict[str, Any]) -> dict[str, Any]:
    """A method's index parameters as they are hashed into its index folder name."""
    return _absent({"p": dict(params)}, "p", current_target(target))["p"]


def _absent(out: dict[str, Any], node_key: str, where: str) -> dict[str, Any]:
    node = out.get(node_key)
    if isinstance(node, dict):
        for w, key, value in HASHED_AS_ABSENT:
            if w == where and key in node and node[key] == value:
                del node[key]
    return out


# -- artifacts -------------------------------------------------------------------------------

def artifacts_format(meta: dict[str, Any], where: str = "meta.json") -> int:
    return _check(int(meta.get("run_format", 0)), where)


def _undated(proto: Any) -> Any:
    """Keys a protocol description gained after the last format change, so a description of any
    format may lack them: LongMemEval's grounding version (2026-12-06; before it, version 1)."""
    if isinstance(proto, dict) and proto.get("protocol") == "longmemeval" and "grounding_version" not in proto:
        return {**proto, "grounding_version": 1}
    return proto


def upgrade_protocol_description(proto: Any, fmt: int = 0) -> Any:
    """An older `protocol` description (meta.json, metrics.json provenance) as today's describe()
    writes it. Format 0: the judge version its run used, which format 0 left out for version 1
    (and for LoCoMo always), and the grounding version (1: format 0 predates version 2 and the
    key). Formats 0-2: EpBench's order judge version (1)."""
    if not isinstance(proto, dict):
        return proto
    out = dict(_undated(proto))
    if fmt < 1:
        if out.get("protocol") == "epbench":
            out.setdefault("judge_version", 1)
        elif out.get("protocol") == "locomo":
            version = _LOCOMO_JUDGE_VERSIONS.get(str(out.get("judge_prompt")), 1)
            if version == 1:
                out.setdefault("category_5", CATEGORY_5_BY_JUDGE)
            out.setdefault("judge_version", version)
        if out.get("protocol") in ("epbench", "locomo", "custom"):
            out.setdefault("grounding_version", 1)
    if fmt < 3 and out.get("protocol") == "epbench":  # after the keys describe() writes before it
        out.setdefault("order_judge_version", 1)
    return out


def upgrade_meta(meta: dict[str, Any], where: str = "meta.json") -> dict[str, Any]:
    fmt = artifacts_format(meta, where)
    if fmt >= RUN_FORMAT:
        return {**meta, "protocol": _undated(meta["protocol"])} if "protocol" in meta else meta
    return {**meta, "protocol": upgrade_protocol_description(meta.get("protocol"), fmt)}


def upgrade_metrics(metrics: dict[str, Any], meta: dict[str, Any],
                    presentation: dict[str, Any] | None = None,
                    blocks: Callable[[], dict[str, Any]] | None = None) -> dict[str, Any]:
    """metrics.json of an older run as today's score stage writes it. Formats 0-2: the protocol
    description completed (upgrade_protocol_description). Format 0: the protocol's
    `presentation` block (given by the caller, which has the run's protocol) appended. Formats
    0 and 1: the statistics blocks appended, computed
    by `blocks` (the caller's, which has the run's artifacts) unless the file has them (a
    folder rescored by today's code: `statistics` marks it)."""
    fmt = artifacts_format(meta)
    if fmt >= RUN_FORMAT:
        prov = metrics.get("provenance")
        if isinstance(prov, dict) and "protocol" in prov:
            return {**metrics, "provenance": {**prov, "protocol": _undated(prov["protocol"])}}
        return metrics
    out = dict(metrics)
    if isinstance(out.get("provenance"), dict):
        out["provenance"] = {**out["provenance"],
                             "protocol": upgrade_protocol_description(out["provenance"].get("protocol"), fmt)}
    if fmt < 1 and presentation is not None and "presentation" not in out:
        out["presentation"] = presentation
    if blocks is not None and "statistics" not in out:
        out.update(blocks())
    return out


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


def saved_dataset(run: Path, data_dir: Path | None = None) -> Any:
    """The benchmark data the run's saved loader reads (at `data_dir` when given, else the saved
    path if it exists, else $MEMEVAL_DATA); None when the config names no loader or the data is
    not on this machine."""
    cfg = read_config(run)
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


DIAGNOSTIC_KEYS = ("failure_label", "gold_recall", "all_gold_present", "gold_token_share")


def question_diagnostics(run: Path) -> dict[str, dict[str, Any]]:
    """question_id -> the score stage's per-question diagnostics and failure label: from
    diagnostics.jsonl, or (format 0) from the keys the score stage wrote into judgments.jsonl."""
    from .folder import RunFolder

    folder = RunFolder(Path(run))
    if folder.has("diagnostics.jsonl"):
        return {r["question_id"]: {k: r.get(k) for k in DIAGNOSTIC_KEYS}
                for r in folder.read_jsonl("diagnostics.jsonl")}
    return {j["question_id"]: {k: j[k] for k in DIAGNOSTIC_KEYS if k in j}
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
    if not (OmegaConf.load(run / "config.yaml").get("subset") or {}).get("ids"):
        return meta
    head, _, rest = label.partition(" (stratified by ")
    tail = rest.partition(")")[2]
    return {**meta, "subset": f"{head} chosen by id (subset.ids){tail}"}


def read_config(run: Path) -> DictConfig:
    return upgrade_config(OmegaConf.load(Path(run) / "config.yaml"))
