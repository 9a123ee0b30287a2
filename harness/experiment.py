"""The run's experiment as meta.json records it: its name, and where the run departs from the
settings of the published experiment it claims to reproduce.

`+experiment=paper` declares what the GSW paper ran (conf/experiment/paper.yaml
`experiment.reference`: answering and judge model, and per method its embedder, indexing model
and answer prompt). The run's own components are compared with that declaration, not with a
guess from names, so a setting the run could not follow (NV-Embed-v2, which no API serves) or a
command-line override (llm=local under the paper experiment) is named in every table instead of
passing as the paper's setting. The fair experiment declares no reference: nothing to depart from.
"""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf

from .build import Components


def _reference(cfg: DictConfig) -> dict[str, Any]:
    node = OmegaConf.select(cfg, "experiment.reference")
    if node is None:
        return {}
    ref = OmegaConf.to_container(node, resolve=True)
    return ref if isinstance(ref, dict) else {}


def deviations(reference: dict[str, Any], method: str, actual: dict[str, str]) -> list[str]:
    """What differs from `reference` (answer_model, judge_model, subset "all", and the method's
    own entry under `methods`), one phrase each; `actual` holds the run's values by those keys."""
    out = []
    wanted = {k: reference[k] for k in ("answer_model", "judge_model") if reference.get(k)}
    own = (reference.get("methods") or {}).get(method)
    if isinstance(own, dict):
        wanted.update({k: v for k, v in own.items() if k in ("embedder", "answer_with") and v})
        wanted["index_model"] = own.get("index_model") or reference.get("answer_model")
    names = {"answer_model": "answering model", "judge_model": "judge", "embedder": "embedder",
             "index_model": "indexing model", "answer_with": "answer prompt (answer_with)"}
    for key, want in wanted.items():
        if want and actual.get(key) != want:
            out.append(f"{names[key]} {actual.get(key)}, not the reference's {want}")
    if reference and not str(actual.get("subset", "all")).startswith("all"):
        out.append(f"questions {actual.get('subset')}, not all of them")
    return out


def experiment_meta(cfg: DictConfig, c: Components) -> dict[str, Any]:
    """meta.json `experiment`: {name, and with a reference: source, deviations}."""
    name = str(OmegaConf.select(cfg, "experiment.name", default="fair"))
    out: dict[str, Any] = {"name": name}
    reference = _reference(cfg)
    if reference:
        actual = {"answer_model": c.llm.display_name, "judge_model": c.judge.display_name,
                  "index_model": c.indexer.display_name, "embedder": c.embedder.display_name,
                  "answer_with": str(c.method_cfg.get("answer_with") or "shared"), "subset": c.subset_label}
        out["reference"] = str(reference.get("source") or "")
        out["deviations"] = deviations(reference, str(c.method_cfg.name), actual)
    return out
