"""What the score stage needs from the dataset but cannot read from a run's artifacts.

A run records these in meta.json when it is made (harness/pipeline.py), so scoring stays a
function of the run folder: the population a question subset was drawn from (its stratum
counts, for an overall weighted by each stratum's share) and which of the run's questions a
published audit of the gold flags. Runs made before they were recorded get them from the data
through the upgrade module (evaluation/runs/upgrade.py), computed by this same function.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from .types import Dataset, Question


def population(questions: Iterable[Question], key: str) -> dict[str, Any]:
    """Stratum counts of the question set a subset is drawn from (keys as strings, sorted)."""
    counts = Counter(str(q.attrs.get(key)) for q in questions)
    return {"key": key, "n": sum(counts.values()), "counts": dict(sorted(counts.items()))}


def dataset_facts(dataset: Dataset, pool: list[Question] | None, run_ids: Iterable[str]) -> dict[str, Any]:
    """meta.json's `population` (None: not known, see the upgrade module) and `gold_audit`
    (None: no audit of this dataset exists; flagged ids restricted to the run's questions)."""
    audit = dataset.gold_audit
    ids = set(run_ids)
    return {
        "population": population(pool, dataset.strata_key) if pool is not None else None,
        "gold_audit": None if audit is None else {
            "source": audit.source, "rule": audit.rule, "available": audit.available,
            "flagged": {k: v for k, v in sorted(audit.flagged.items()) if k in ids}},
    }
