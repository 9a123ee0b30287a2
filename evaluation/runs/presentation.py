"""A scored run's presentation, for every reader (report, compare, tracking, notebooks).

The score stage writes the protocol's declaration into metrics.json (`presentation`); run
folders scored before that lack it, and get the one their own protocol declares. Readers go
through `presentation_for` alone, so that fallback lives in one place (`with_presentation`, for
a bundle's byte-for-byte replay check, uses it too).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..presentation import Presentation
from .folder import RunFolder
from .scoring import load_protocol


def presentation_for(metrics: dict[str, Any], run: RunFolder | Path) -> Presentation:
    """The `presentation` block of metrics.json; for a folder scored before the block existed,
    the presentation its protocol (as config.yaml configures it) declares."""
    block = metrics.get("presentation")
    if isinstance(block, dict):
        return Presentation.from_dict(block)
    folder = run if isinstance(run, RunFolder) else RunFolder(Path(run))
    return load_protocol(folder).presentation()


def with_presentation(metrics: dict[str, Any], run: RunFolder | Path) -> dict[str, Any]:
    """metrics.json as today's score stage writes it: with the presentation block, added last
    (where score_run adds it) to a folder scored before the block existed."""
    if isinstance(metrics.get("presentation"), dict):
        return metrics
    return {**metrics, "presentation": presentation_for(metrics, run).to_dict()}
