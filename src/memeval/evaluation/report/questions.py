"""Per-question views of one run and across methods, for error analysis
(notebooks/error_analysis.ipynb)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from ..runs.folder import RunFolder
from ..runs.scored import load_runs
from ..runs.upgrade import question_diagnostics


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
    frame = preds.merge(judg[keep], on="question_id", how="left") if not judg.empty else preds
    diags = pd.DataFrame([{"question_id": q, **d} for q, d in question_diagnostics(run.root).items()])
    if diags.empty:
        return frame
    keep = [c for c in diags.columns if c not in frame.columns or c == "question_id"]
    return frame.merge(diags[keep], on="question_id", how="left")


def _unit_recall(gold: list[str], context: list[str]) -> float | None:
    """Share of the gold chapters/sessions that reached the answer context (None: nothing to find)."""
    if not gold:
        return None
    return len(set(gold) & set(context)) / len(set(gold))


def _verdict(items: Any, scores: Any) -> str:
    if not isinstance(scores, list):
        return "–"
    return f"credits {scores} for claimed {json.dumps(items, ensure_ascii=False)}"


def questions(run_dirs: list[Path]) -> pd.DataFrame:
    """One row per (method, question): the question_frame columns plus `question_score` (the
    headline the run's protocol gives the question), judge and matcher verdicts and `disagree`
    (the LLM judge and the deterministic matcher differ: a credit, or whether the answer claims
    anything; the score stage lists these in metrics.json)."""
    frames = []
    for run in load_runs([Path(p) for p in run_dirs]):
        df = question_frame(run.path)
        df.insert(0, "method", run.label)
        df.insert(1, "health", run.health_cell)  # the run's health mark, as every table shows it
        # the protocol's own per-question headline (its credit and policy), NaN where unjudged
        df["question_score"] = df["question_id"].map(run.question_scores)
        det = df["deterministic"] if "deterministic" in df else pd.Series([None] * len(df))
        judge_scores = df["matching_score"] if "matching_score" in df else pd.Series([None] * len(df))
        df["matcher_score"] = [d.get("matching_score") if isinstance(d, dict) else None for d in det]
        df["judge_verdict"] = [_verdict(i, s) for i, s in zip(df.get("identified_items", [None] * len(df)),
                                                               judge_scores, strict=True)]
        df["matcher_verdict"] = [_verdict(d.get("identified_items"), d.get("matching_score"))
                                 if isinstance(d, dict) else "–" for d in det]
        listed = {d.get("question_id") for d in (run.metrics.get("agreement") or {}).get("disagreements", [])}
        df["disagree"] = [q in listed or (m is not None and isinstance(j, list) and list(m) != list(j))
                          for q, m, j in zip(df["question_id"], df["matcher_score"], judge_scores, strict=True)]
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def select(df: pd.DataFrame, bucket: str | None = None, retrieval_type: str | None = None,
           disagreement: bool | None = None) -> pd.DataFrame:
    """Filter by cue bucket, retrieval type and judge/matcher disagreement (None = any)."""
    keep = pd.Series(True, index=df.index)
    if bucket is not None and "bucket" in df:
        keep &= df["bucket"].astype(str) == str(bucket)
    if retrieval_type is not None and "retrieval_type" in df:
        keep &= df["retrieval_type"] == retrieval_type
    if disagreement is not None:
        keep &= df["disagree"] == disagreement
    return df[keep]


def side_by_side(df: pd.DataFrame, question_id: str, context_chars: int = 600) -> pd.DataFrame:
    """One question across methods: fields as rows, one column per method."""
    rows = df[df["question_id"] == question_id]
    if rows.empty:
        raise KeyError(f"question {question_id!r} is in none of the runs")
    fields = {"question": "question", "gold": "gold", "context chapters": "context_chapters",
              "context tokens": "context_tokens", "context sent": "context_text", "answer": "answer",
              "judge verdict": "judge_verdict", "matcher verdict": "matcher_verdict", "F1": "f1",
              "question score": "question_score",
              "disagree": "disagree"}
    out = {}
    for _, r in rows.iterrows():
        col = {}
        for name, key in fields.items():
            v = r.get(key)
            if key == "context_text" and isinstance(v, str) and len(v) > context_chars:
                v = v[:context_chars] + f" … [{len(v) - context_chars} more characters]"
            col[name] = v
        out[r["method"]] = col
    return pd.DataFrame(out)
