"""A scored run's presentation, for every reader (report, compare, tracking, notebooks).

The score stage writes the protocol's declaration into metrics.json (`presentation`); a run
folder scored before that lacks it, and the upgrade path (scoring.read_metrics) adds the one its
own protocol declares. Readers go through `presentation_for` alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..presentation import Presentation
from .folder import RunFolder
from .scoring import read_metrics


def presentation_for(metrics: dict[str, Any], run: RunFolder | Path) -> Presentation:
    """The `presentation` block of metrics.json (read through the upgrade path when the
    metrics given lack it)."""
    block = metrics.get("presentation")
    if not isinstance(block, dict):
        folder = run if isinstance(run, RunFolder) else RunFolder(Path(run))
        block = read_metrics(folder)["presentation"]
    return Presentation.from_dict(block)
