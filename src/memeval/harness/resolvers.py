"""OmegaConf resolvers used by the YAML configs (one source of truth for derived settings)."""

from __future__ import annotations

from omegaconf import OmegaConf


def _local_model_sha(name: str) -> str:
    from memeval.model_access.local_models import get_model

    return get_model(name).sha256


def _headline_credit(judge_server: object | None) -> str:
    from memeval.evaluation.conversations.grounding import headline_credit

    return headline_credit(judge_server)


def register_resolvers() -> None:
    if not OmegaConf.has_resolver("mul"):
        OmegaConf.register_new_resolver("mul", lambda a, b: int(a) * int(b))
    if not OmegaConf.has_resolver("local_model_sha"):
        OmegaConf.register_new_resolver("local_model_sha", _local_model_sha)
    if not OmegaConf.has_resolver("headline_credit"):  # grounded for a local judge, raw for an API one
        OmegaConf.register_new_resolver("headline_credit", _headline_credit)
