"""The run's experiment as meta.json records it: its name, and where the run departs from the
settings of the published experiment it claims to reproduce.

An experiment with a reference (`+experiment=paper`: the GSW paper; `+experiment=seem_paper`:
SEEM's) declares what that paper ran in conf/experiment/<name>.yaml `experiment.reference`: the
answering and judge models, the scoring rule and the judge's input, and per method its embedder,
indexing and query-time models, settings, output guard and package version. Here the run's own
components are read (never guessed from names) and harness/reference.py compares them with that
declaration, so a setting the run could not follow (NV-Embed-v2, which no API serves), a
command-line override (llm=local under the paper experiment) or a safeguard of ours the paper did
not have (GSW's output guard) is named in every table instead of passing as the paper's setting.
A run the reference does not hold is refused before it starts (reference.check_scope). The fair
experiment declares no reference: its tables say so.
"""

from __future__ import annotations

import re
from typing import Any

from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf

from .build import Components
from .reference import deviations, reference_of

__all__ = ["deviations", "experiment_meta", "installed_versions", "scoring_facts"]


def scoring_facts(protocol: Any) -> dict[str, str]:
    """What the run's protocol scores and judges by, in a reference's terms (`scoring`): its policy,
    P/R convention and credit where it has them, and its judge's input (EpBench: judge_facts)."""
    out = {key: str(getattr(protocol, key)) for key in ("policy", "credit") if getattr(protocol, key, None)}
    if hasattr(protocol, "pr_convention"):
        out["pr_convention"] = str(protocol.pr_convention or "defined_only")
    facts = getattr(getattr(protocol, "judging", None), "judge_facts", None)
    if callable(facts):
        out.update(facts())
    return out


def _method_class(method_cfg: DictConfig) -> type | None:
    try:
        return get_class(str(method_cfg._target_))
    except Exception:  # a class that cannot be loaded has nothing more to say
        return None


def output_guard(cls: type | None) -> str:
    """The output guard a method's extraction always passes (no switch turns it off): its version,
    as the class declares it (`output_guard_version`)."""
    return str(getattr(cls, "output_guard_version", "none") or "none")


def installed_versions(cls: type | None) -> dict[str, str]:
    """Distribution -> version pinned in the lock of a baseline package's environment (the
    class's `env_spec`; the --no-deps pins too); {} for a method with no package."""
    spec = getattr(cls, "env_spec", None)
    if spec is None:
        return {}
    pins = [*spec.lock_text().splitlines(), *spec.no_deps]
    found = (re.match(r"\s*([A-Za-z0-9_.-]+)==([^\s;\\]+)", line) for line in pins)
    return {m.group(1).lower(): m.group(2) for m in found if m}


def _uncapped(c: Components) -> bool:
    """Whether the run's cap holds every unit of its largest corpus (so it caps nothing)."""
    if c.cap.max_tokens is not None:
        return False
    most = max((len(corpus.units) for corpus in c.dataset.corpora.values()), default=0)
    return c.cap.max_units is None or c.cap.max_units >= most


def experiment_meta(cfg: DictConfig, c: Components) -> dict[str, Any]:
    """meta.json `experiment`: {name, and with a reference: source, deviations, silent (what the
    reference does not give, never compared)}."""
    name = str(OmegaConf.select(cfg, "experiment.name", default="fair"))
    out: dict[str, Any] = {"name": name}
    reference = reference_of(cfg)
    if reference:
        cls = _method_class(c.method_cfg)
        settings = OmegaConf.to_container(c.method_cfg, resolve=True)
        actual = {"answer_model": c.llm.display_name, "judge_model": c.judge.display_name,
                  "index_model": c.indexer.display_name, "embedder": c.embedder.display_name,
                  "answer_with": str(c.method_cfg.get("answer_with") or "shared"), "subset": c.subset_label,
                  "query_model": c.llm.display_name,  # every method's query-time calls use the answering model
                  "context_cap": c.cap.describe(), "uncapped": _uncapped(c),
                  "scoring": scoring_facts(c.protocol), "settings": settings if isinstance(settings, dict) else {},
                  "output_guard": output_guard(cls), "package_versions": installed_versions(cls)}
        out["reference"] = str(reference.get("source") or "")
        out["deviations"] = deviations(reference, str(c.method_cfg.name), actual)
        if reference.get("silent"):
            out["silent"] = [str(s) for s in reference["silent"]]
    return out
