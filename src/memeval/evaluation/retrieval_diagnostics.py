"""Retrieval diagnostics with no model call: did the gold units reach the answering model?

Contract: a prediction's `context_chapters` lists the units (chapters, sessions, documents) its
context came from. For methods that send text that is the units shown; for methods that send
summaries or graph descriptions (GSW entity summaries, SEEM frames, GraphRAG/LightRAG
descriptions) it is the units those summaries were derived from, as the method records them.
Per question with gold units:

- gold_recall: share of gold units in `context_chapters` (the cap bounds how many there are);
- all_gold_present: every gold unit is there;
- gold_token_share: share of the context's tokens in blocks headed by a gold unit (see
  `unit_token_attribution`); NaN when no block of the context names a unit.

Failure label (per question, written into judgments.jsonl by the score stage):
`correct` (the protocol's full credit: F1 = 1 on item protocols, a CORRECT / yes verdict on
judge protocols), else `retrieval_miss` (no gold unit in the context), `partial_retrieval`
(some), `generation_miss` (all gold units present, or the question has none to retrieve, and
the answer is still wrong); `unjudged` when the judge failed; `wrong_unseen` for a wrong answer
whose context is not known (imported answers whose source published none: retrieval and generation
cannot be told apart), counted only where it occurs.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from memeval.datasets.types import Corpus
from memeval.model_access.tokenizer import count_tokens

from .protocol import fmt
from .stats import bootstrap_std, nanmean

LABELS = ("correct", "generation_miss", "partial_retrieval", "retrieval_miss", "unjudged")
UNSEEN = "wrong_unseen"  # not in LABELS: a key only runs with unpublished contexts write
UNATTRIBUTED = ""
_BLOCK = re.compile(r"(?m)^(?=### )")
_AFTER = (" ", ":", "(", ",", "-", "\n")


def _header_names(corpus: Corpus, unit_id: str) -> list[str]:
    """How a unit may head a block: `unit_block` (title or 'Session id', + date) or a bare id/title."""
    u = corpus.unit(unit_id)
    names = [n for n in (u.title, f"Session {u.id}", u.id) if n]
    if u.timestamp:
        names += [f"{n} ({u.timestamp})" for n in names]
    return names


def unit_token_attribution(context_text: str, unit_ids: list[str], corpus: Corpus) -> dict[str, int]:
    """Tokens of the context per unit: each '### ' block goes to the context unit its header
    names (longest match); text before the first header or under an unknown header goes to ''."""
    names: list[tuple[str, str]] = []
    for uid in dict.fromkeys(unit_ids):
        try:
            names += [(n, uid) for n in _header_names(corpus, uid)]
        except KeyError:
            continue
    names.sort(key=lambda x: -len(x[0]))
    out: dict[str, int] = {}
    for block in _BLOCK.split(context_text):
        if not block:
            continue
        owner = UNATTRIBUTED
        if block.startswith("### "):
            head = block[4:].split("\n", 1)[0]
            for name, uid in names:
                if head.startswith(name) and (len(head) == len(name) or head[len(name)] in _AFTER):
                    owner = uid
                    break
        out[owner] = out.get(owner, 0) + count_tokens(block)
    return out


def question_diagnostics(pred: dict[str, Any]) -> dict[str, Any]:
    """Recall, all-present flag and gold token share of one prediction (NaN without gold units)."""
    gold = list(dict.fromkeys(map(str, pred.get("gold_units") or [])))
    ctx = set(map(str, pred.get("context_chapters") or []))
    if not gold:
        return {"n_gold_units": 0, "gold_recall": math.nan, "all_gold_present": None,
                "gold_token_share": math.nan}
    hit = sum(1 for g in gold if g in ctx)
    share = math.nan
    tokens = pred.get("context_unit_tokens")
    if isinstance(tokens, dict):
        total = sum(tokens.values())
        attributed = total - tokens.get(UNATTRIBUTED, 0)
        if total and attributed:
            share = sum(v for k, v in tokens.items() if k in set(gold)) / total
    return {"n_gold_units": len(gold), "gold_recall": hit / len(gold), "all_gold_present": hit == len(gold),
            "gold_token_share": share}


def failure_label(diag: dict[str, Any], correct: bool | None, context_known: bool = True) -> str:
    if correct is None:
        return "unjudged"
    if correct:
        return "correct"
    if not context_known:
        return UNSEEN
    if diag["n_gold_units"] == 0 or diag["gold_recall"] >= 1.0:
        return "generation_miss"
    return "retrieval_miss" if diag["gold_recall"] == 0 else "partial_retrieval"


def correctness(protocol: Any, judgments: list[dict[str, Any]],
                predictions: list[dict[str, Any]]) -> dict[str, bool]:
    """Full credit per question from the protocol's headline per-question score."""
    scores = protocol.question_scores(judgments, predictions)
    return {qid: s >= 1.0 - 1e-9 for qid, s in scores.items() if not math.isnan(s)}


def _aggregate(rows: list[dict[str, Any]], resamples: int, seed: int) -> dict[str, Any]:
    gold = [r for r in rows if r["n_gold_units"] > 0]
    rec = np.array([r["gold_recall"] for r in gold], dtype=float)
    share = np.array([r["gold_token_share"] for r in gold], dtype=float)
    labels = {k: sum(1 for r in rows if r["failure_label"] == k) for k in LABELS}
    if any(r["failure_label"] == UNSEEN for r in rows):
        labels[UNSEEN] = sum(1 for r in rows if r["failure_label"] == UNSEEN)
    return {
        "n": len(rows), "n_with_gold": len(gold),
        "gold_recall": nanmean(rec) if rec.size else math.nan,
        "gold_recall_std": bootstrap_std(len(rec), lambda i: nanmean(rec[i]), resamples, seed),
        "all_gold_present": (sum(1 for r in gold if r["all_gold_present"]) / len(gold)) if gold else math.nan,
        "gold_token_share": nanmean(share) if share.size else math.nan,
        "n_token_share": int(np.sum(~np.isnan(share))),
        "labels": labels,
    }


def group_keys(meta: dict[str, Any], predictions: list[dict[str, Any]], field: str | None) -> list[str]:
    """The dataset's group keys from meta; else the per-question field the protocol groups by."""
    keys = list(meta.get("group_keys") or ([meta["strata_key"]] if meta.get("strata_key") else []))
    if not keys and field and predictions and field in predictions[0]:
        keys = [field]
    return keys


def diagnose(protocol: Any, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]],
             meta: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Per-question diagnostics + label (by question id), and the metrics.json block."""
    correct = correctness(protocol, judgments, predictions)
    per_q: dict[str, dict[str, Any]] = {}
    rows = []
    for p in predictions:
        d = question_diagnostics(p)
        known = (p.get("retrieval") or {}).get("context_published") is not False
        d["failure_label"] = failure_label(d, correct.get(p["question_id"]), known)
        per_q[p["question_id"]] = d
        rows.append({**d, "_pred": p})
    kw = {"resamples": getattr(protocol, "resamples", 1000), "seed": getattr(protocol, "seed", 0)}
    keys = group_keys(meta, predictions, protocol.presentation().group_field)
    groups: dict[str, dict[str, Any]] = {}
    for key in keys:
        values = list(dict.fromkeys(str(r["_pred"].get(key)) for r in rows if key in r["_pred"]))
        groups[key] = {v: _aggregate([r for r in rows if str(r["_pred"].get(key)) == v], **kw)
                       for v in sorted(values)}
    summary = {"overall": _aggregate(rows, **kw), "groups": groups,
               "context_units": "context_chapters (for summary methods: the units the context was derived from)",
               "correct_means": "full credit: headline per-question score = 1 (F1 on item protocols, "
                                "CORRECT/yes verdict on judge protocols)"}
    return per_q, summary


def diagnostics_rows(judgments: list[dict[str, Any]], per_q: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """diagnostics.jsonl: per judged question its gold-unit diagnostics and failure label."""
    return [{"question_id": j["question_id"], **{k: d[k] for k in ("failure_label", "gold_recall",
                                                                   "all_gold_present", "gold_token_share")}}
            for j in judgments if (d := per_q.get(j["question_id"]))]


def table_section(summary: dict[str, Any], method: str) -> str:
    """Markdown appended to results.md: one row overall and one per group value."""
    def row(label: str, m: dict[str, Any]) -> str:
        lab = m["labels"]
        split = " / ".join(str(lab[k]) for k in LABELS[:4])
        if lab["unjudged"]:
            split += f" (+{lab['unjudged']} unjudged)"
        if lab.get(UNSEEN):
            split += f" (+{lab[UNSEEN]} wrong, context not published)"
        return (f"| {label} | {m['n']} | {m['n_with_gold']} | {fmt(m['gold_recall'])} ± "
                f"{fmt(m['gold_recall_std'])} | {fmt(m['all_gold_present'])} | {fmt(m['gold_token_share'])} | "
                f"{split} |")

    lines = ["", f"Retrieval diagnostics for **{method}** (no model call):", "",
             "| group | n | n with gold units | gold recall ± std | all gold present | gold token share "
             "| correct / generation_miss / partial_retrieval / retrieval_miss |",
             "|---|---|---|---|---|---|---|", row("**overall**", summary["overall"])]
    for key, values in summary["groups"].items():
        lines += [row(f"{key}={v}", m) for v, m in values.items()]
    lines += ["", "Gold recall: share of the question's gold units among the context's units "
              "(`context_chapters`; for summary methods the units the context was derived from). "
              "Gold token share: share of context tokens in blocks headed by a gold unit (– when the "
              "context names no unit). Labels: correct = full credit; otherwise by how many gold units "
              "reached the context (generation_miss: all, or none to retrieve)."]
    return "\n".join(lines) + "\n"
