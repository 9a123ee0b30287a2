"""The judge check's label sets: each registered protocol's own (its class's `label_set`, defined
in its family's package; evaluation/adapters.py), by the protocol's registered name. A new
benchmark's label set is one attribute of its protocol class, nothing here.
"""

from __future__ import annotations

from typing import Any

import yaml

from memeval.evaluation.adapters import LabelSet, label_sets
from memeval.paths import ROOT

__all__ = ["LabelSet", "default_name", "label_sets"]


def default_name(sets: dict[str, LabelSet]) -> str:
    """The label set of the dataset a run composes by default (conf/config.yaml's defaults list),
    else the first by name."""
    if not sets:
        raise SystemExit("error: no registered protocol declares a judge-check label set")
    config: dict[str, Any] = yaml.safe_load((ROOT / "conf" / "config.yaml").read_text(encoding="utf-8")) or {}
    chosen = next((d["dataset"] for d in config.get("defaults") or [] if isinstance(d, dict) and "dataset" in d), None)
    return next((name for name, s in sorted(sets.items()) if s.config == chosen), min(sets))
