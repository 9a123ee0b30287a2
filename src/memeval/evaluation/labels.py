"""Hand-labelled answer sets (evaluation/judge_meta/*.jsonl), shared by both families' judge checks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memeval.datasets.types import Dataset, Question

from .protocol import fmt

META = Path(__file__).parent / "judge_meta"


def labelled_questions(labels_path: Path, dataset: Dataset) -> Iterator[tuple[dict[str, Any], Question]]:
    """Each label of a JSONL label file with its question; a label naming an unknown question is
    refused (both judge checks read their label sets through this)."""
    by_id = {q.id: q for q in dataset.questions}
    for line in labels_path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        label = json.loads(line)
        q = by_id.get(label["question_id"])
        if q is None:
            raise ValueError(f"label {label['id']}: unknown question {label['question_id']} in {labels_path}")
        yield label, q


def category_lines(title: str, cases: list, configs: list[str], by_cat: dict[str, dict],
                   stat: str = "accuracy") -> list[str]:
    """A per-answer-category table of one statistic (credit accuracy by default) that both judge
    checks print (cases carry label["category"])."""
    lines = ["", title, "", "| category | answers | " + " | ".join(configs) + " |",
             "|---|---|" + "---|" * len(configs)]
    for cat in sorted(by_cat):
        n = sum(1 for c in cases if c.label["category"] == cat)
        lines.append(f"| {cat} | {n} | " + " | ".join(fmt(by_cat[cat][k][stat]) for k in configs) + " |")
    return lines
