"""API-equivalent cost: what a run's tokens would cost at a reference API model's prices.

Local models cost nothing, so a local run's cost columns read 0.0000 for every method and say
nothing about which method is expensive. Pricing every token the run needed (its index, from
the index's own usage record, plus retrieval, answering and judging, fresh and cached) at one
reference chat model and one reference embedding model makes methods comparable in money.
The price table and both models are named wherever the figure appears.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from memeval.paths import CONF

from ..runs.scored import Run

PRICE_DIR = CONF / "prices"
DEFAULT_TABLE = PRICE_DIR / "usd_2026_11.yaml"
DEFAULT_CHAT = "gpt-4o-mini"  # the API model a researcher would answer and judge with
DEFAULT_EMBEDDER = "text-embedding-3-small"


@dataclass(frozen=True)
class Reference:
    """A price table (USD per 1M tokens) and the API models every token is priced at."""

    version: str
    models: dict[str, dict[str, float]]
    chat: str = DEFAULT_CHAT
    embedder: str = DEFAULT_EMBEDDER

    @property
    def label(self) -> str:
        return f"API-equivalent USD ({self.chat} + {self.embedder}, price table {self.version})"

    def usd(self, model_kind: str, prompt_tokens: int, completion_tokens: int) -> float:
        name = self.embedder if model_kind == "embedding" else self.chat
        p = self.models[name]
        return (prompt_tokens * float(p.get("input", 0.0)) + completion_tokens * float(p.get("output", 0.0))) / 1e6


def load_reference(path: Path = DEFAULT_TABLE, chat: str = DEFAULT_CHAT, embedder: str = DEFAULT_EMBEDDER) -> Reference:
    """The price table at `path` (conf/prices/*.yaml); both reference models must be in it."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    models = {str(k): dict(v) for k, v in (data.get("models") or {}).items()}
    missing = [m for m in (chat, embedder) if m not in models]
    if missing:
        raise ValueError(f"{path}: no price for {', '.join(missing)} (models priced: {', '.join(models)})")
    return Reference(str(data.get("version", Path(path).stem)), models, chat, embedder)


def _kind(run: Run, model: str) -> str:
    """A model the run embedded with is priced as an embedding model, any other as chat."""
    embedders = run.meta.get("embedder")
    names = embedders if isinstance(embedders, list) else [embedders]
    return "embedding" if model in {str(n) for n in names if n} else "chat"


def stage_tokens(run: Run) -> dict[str, dict[str, dict[str, int]]]:
    """{stage: {model: {prompt_tokens, completion_tokens}}}: the index from its usage record,
    every other stage from this run's usage.json, fresh and cached together."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for name, st in (run.usage.get("stages") or {}).items():
        if name == "index":
            continue
        for model, kinds in (st.get("by_model") or {}).items():
            acc = out.setdefault(name, {}).setdefault(model, {"prompt_tokens": 0, "completion_tokens": 0})
            for b in kinds.values():
                acc["prompt_tokens"] += int(b.get("prompt_tokens", 0))
                acc["completion_tokens"] += int(b.get("completion_tokens", 0))
    for model, m in run.index_usage.by_model.items():
        out.setdefault("index", {})[model] = {"prompt_tokens": int(m["prompt_tokens"]),
                                              "completion_tokens": int(m["completion_tokens"])}
    return out


def api_equivalent(run: Run, ref: Reference) -> dict[str, Any]:
    """{"total": USD, "stages": {stage: USD}} of the run's tokens at the reference prices."""
    stages: dict[str, float] = {}
    for name, models in stage_tokens(run).items():
        stages[name] = sum(ref.usd(_kind(run, model), t["prompt_tokens"], t["completion_tokens"])
                           for model, t in models.items())
    return {"total": sum(stages.values()), "stages": stages}
