"""An experiment's reference (what a published experiment ran, conf/experiment/*.yaml
`experiment.reference`) and the run's departures from it, one phrase each.

Only the run's configuration is read here (no component is built), so a run outside its
reference is refused before anything is written (`check_scope`), and the comparison itself
(`deviations`) is plain data in, phrases out: harness/experiment.py gathers what the run
actually does (its models, its protocol's scoring facts, its method's settings, the installed
package) and hands it over. Nothing is guessed from a name: a method is in the reference when
the reference lists it (or lists it as an ablation of a method it lists).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from memeval.model_access.errors import ConfigError
from memeval.paths import CONF

from .config_data import dict_or_none

EXPERIMENTS = CONF / "experiment"

_MODELS = {"answer_model": "answering model", "judge_model": "judge", "embedder": "embedder",
           "index_model": "indexing model", "answer_with": "answer prompt (answer_with)"}
_SCORING = {"policy": "scoring rule (policy)", "pr_convention": "P/R convention", "credit": "credit",
            "judge_input": "judge input", "judge_empties_items": "judge empties the item list",
            "gold_duplicates": "duplicate gold items"}


def reference_of(cfg: DictConfig) -> dict[str, Any]:
    """The run's `experiment.reference`, resolved; {} when it has none (the fair experiment)."""
    node = OmegaConf.select(cfg, "experiment.reference")
    if node is None:
        return {}
    return dict_or_none(node, resolve=True) or {}


def method_entry(reference: dict[str, Any], method: str) -> dict[str, Any] | None:
    """The reference's settings for `method` (an ablation's are its base method's); None when the
    reference does not list it. A reference without `methods` takes every method as it is."""
    methods = reference.get("methods")
    if methods is None:
        return {}
    if method in methods:
        return methods[method] or {}
    base = (reference.get("ablations") or {}).get(method)
    return (methods[base] or {}) if base in methods else None


def covers(reference: dict[str, Any], method: str | None, dataset: str | None) -> bool:
    """Whether the reference holds this method on this dataset (None: any)."""
    datasets = reference.get("datasets")
    return ((dataset is None or datasets is None or dataset in datasets)
            and (method is None or method_entry(reference, method) is not None))


def experiments_covering(method: str | None, dataset: str | None,
                         folder: Path = EXPERIMENTS) -> dict[str, dict[str, Any]]:
    """The shipped experiments (name -> reference) whose reference holds this method on this
    dataset (None: any)."""
    out = {}
    for path in sorted(folder.glob("*.yaml")):
        ref = OmegaConf.select(OmegaConf.load(path), "experiment.reference")
        data = dict_or_none(ref, resolve=False)
        if data is not None and covers(data, method, dataset):
            out[path.stem] = data
    return out


def check_scope(cfg: DictConfig) -> None:
    """Refuse a run its experiment's reference does not hold (SEEM or LoCoMo under the GSW
    paper's experiment): it would be labelled with a paper that never ran it. One line, naming
    the experiment that holds it, else the one that holds the method elsewhere, and fair."""
    reference = reference_of(cfg)
    if not reference:
        return
    method, dataset = str(cfg.method.name), str(cfg.dataset.name)
    if covers(reference, method, dataset):
        return
    name = str(OmegaConf.select(cfg, "experiment.name", default="?"))
    what = (f"dataset {dataset}" if dataset not in (reference.get("datasets") or [dataset])
            else f"method {method}")
    both = [e for e in experiments_covering(method, dataset) if e != name]
    if both:
        hint = "use " + " or ".join(f"+experiment={e}" for e in both)
    else:
        elsewhere = [f"+experiment={e} (its datasets: {', '.join(r.get('datasets') or ['any'])})"
                     for e, r in experiments_covering(method, None).items() if e != name]
        hint = "use +experiment=fair (no shipped reference ran it on this dataset)" + (
            f"; {method}'s paper: {' or '.join(elsewhere)}" if elsewhere else "")
    raise ConfigError(f"{what} is not in the {name} experiment's reference "
                      f"({reference.get('source', '?')}): {hint}")


def _model_deviations(reference: dict[str, Any], own: dict[str, Any] | None, actual: dict[str, Any]) -> list[str]:
    wanted = {k: reference[k] for k in ("answer_model", "judge_model") if reference.get(k)}
    if own is not None:
        wanted.update({k: v for k, v in own.items() if k in ("embedder", "answer_with") and v})
        wanted["index_model"] = own.get("index_model") or reference.get("answer_model")
    return [f"{_MODELS[key]} {actual.get(key)}, not the reference's {want}"
            for key, want in wanted.items() if want and actual.get(key) != want]


def _scoring_deviations(reference: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    facts = actual.get("scoring") or {}
    out = []
    for key, want in (reference.get("scoring") or {}).items():
        label = _SCORING.get(key, key)
        if key not in facts:
            out.append(f"{label}: not set by this dataset's protocol (the reference's: {want})")
        elif facts[key] != want:
            out.append(f"{label} {facts[key]}, not the reference's {want}")
    return out


def _method_deviations(method: str, own: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    out = []
    if own.get("query_model") and actual.get("query_model") != own["query_model"]:
        calls = own.get("query_calls") or "the package's query-time calls"
        out.append(f"{calls} on {actual.get('query_model')}, not the reference's {own['query_model']} "
                   "(the package proxy sends every call made outside indexing to the answering model)")
    if own.get("context_cap") == "uncapped" and not actual.get("uncapped"):
        out.append(f"context cap {actual.get('context_cap')}, not the reference's uncapped")
    guard = actual.get("output_guard") or "none"
    if "output_guard" in own and guard != own["output_guard"]:
        out.append(f"output guard {guard} on (drops extracted values that fail its checks), "
                   f"not the reference's {own['output_guard']}")
    settings = actual.get("settings") or {}
    for key, want in (own.get("settings") or {}).items():
        if settings.get(key) != want:
            out.append(f"{method} {key} {_shown(settings.get(key))}, not the reference's {_shown(want)}")
    if isinstance(own.get("package"), dict):
        name, want = own["package"].get("name"), own["package"].get("version")
        have = (actual.get("package_versions") or {}).get(name)
        if have is None:
            out.append(f"package {name}: installed version unknown (the reference's: {want or 'not named'})")
        elif want is None:
            out.append(f"package {name}=={have} (the reference names no version)")
        elif have != want:
            out.append(f"package {name}=={have}, not the reference's {want}")
    return out


def _shown(value: Any) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def deviations(reference: dict[str, Any], method: str, actual: dict[str, Any]) -> list[str]:
    """Every way the run departs from `reference`, one phrase each ([] without a reference).

    `actual` holds the run's values: answer_model, judge_model, index_model, embedder,
    answer_with, subset, query_model, context_cap and uncapped, scoring (its protocol's facts:
    policy, pr_convention, credit, judge_input, judge_empties_items, gold_duplicates),
    settings (the method's config), output_guard, package_versions."""
    if not reference:
        return []
    own = method_entry(reference, method)
    out = _model_deviations(reference, own, actual)
    if own is None:
        out.append(f"method {method} is not in the reference")
    else:
        out.extend(_method_deviations(method, own, actual))
    out.extend(_scoring_deviations(reference, actual))
    if not str(actual.get("subset", "all")).startswith("all"):
        out.append(f"questions {actual.get('subset')}, not all of them")
    return out
