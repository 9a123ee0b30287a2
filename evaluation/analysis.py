"""Per-question frames for error analysis (used by notebooks/error_analysis.ipynb)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.run_folder import RunFolder


def question_frame(run_dir: str | Path) -> pd.DataFrame:
    """One row per question: attributes, answer, context size, judge output, and gold-unit recall."""
    run = RunFolder(Path(run_dir))
    preds = pd.DataFrame(run.read_jsonl("predictions.jsonl"))
    judg = pd.DataFrame(run.read_jsonl("judgments.jsonl"))
    if preds.empty:
        raise FileNotFoundError(f"{run_dir} has no predictions.jsonl")
    preds["gold_unit_recall"] = [
        _unit_recall(g, c) for g, c in zip(preds["gold_units"], preds["context_chapters"], strict=True)
    ]
    keep = [c for c in judg.columns if c not in preds.columns or c == "question_id"]
    return preds.merge(judg[keep], on="question_id", how="left") if not judg.empty else preds


def _unit_recall(gold: list[str], context: list[str]) -> float | None:
    """Share of the gold chapters/sessions that reached the answer context (None: nothing to find)."""
    if not gold:
        return None
    return len(set(gold) & set(context)) / len(set(gold))


def compare_frames(runs: dict[str, str | Path], score: str = "f1") -> pd.DataFrame:
    """Side-by-side per-question scores of several runs on the same questions."""
    cols = {name: question_frame(path).set_index("question_id")[score] for name, path in runs.items()}
    return pd.DataFrame(cols)
