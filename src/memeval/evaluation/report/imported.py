"""Imported answer sets side by side: what each source published, and the same answers re-scored
under this project's one protocol (meta.json `imported`: answers made elsewhere, methods/imported.py).

The published scores differ in answering model, answer prompt, judge and aggregation, so they do
not compare; here every set is scored by the same model-free grounding check, alone and on top of
its source's own verdicts, on the same questions, with intervals that resample whole conversations,
and each system is paired with the full-context baseline of its own answering model where one was
imported (the only comparison that holds the answerer fixed).
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from ..phrases import protocol_of, title
from ..protocol import fmt
from ..runs.scored import Run
from ..stats import paired_difference
from .tables import HEALTH, HEALTH_NOTE, Table, provenance

FULL_CONTEXT = "full-context baseline"  # an answers file header's `role` for everything-in-context answers


def imported(run: Run) -> dict[str, Any] | None:
    block = run.meta.get("imported")
    return block if isinstance(block, dict) else None


def credit_scores(run: Run, key: str) -> dict[str, float]:
    """Per headline question, a judgments credit (`correct`: the published verdict; `grounded`:
    the model-free check alone), judge failures left out."""
    scope = set(run.headline_scores)
    return {j["question_id"]: float(bool(j[key])) for j in run.judgments
            if j["question_id"] in scope and key in j and "judge_error" not in j}


def interval(scores: dict[str, float], clusters: dict[str, str] | None) -> str:
    """Mean [95% interval], the interval from the run's own bootstrap unit (whole conversations)."""
    if not scores:
        return "–"
    d = paired_difference(scores, dict.fromkeys(scores, 0.0), clusters=clusters)
    return f"{d['diff']:.3f} [{d['ci95_low']:.3f}, {d['ci95_high']:.3f}]"


_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}$")


def model_family(name: Any) -> str:
    """A model name without its dated snapshot suffix ("gpt-4.1-mini-2025-04-14" -> "gpt-4.1-mini"):
    sources name the same answerer with and without it."""
    return _SNAPSHOT.sub("", str(name or "").strip().lower())


def baselines(run: Run, runs: list[Run]) -> list[Run]:
    """The imported full-context runs answered by the same model as `run` (never itself)."""
    model = model_family(run.meta.get("answer_model"))
    return [r for r in runs if r is not run and model_family(r.meta.get("answer_model")) == model
            and (imported(r) or {}).get("role") == FULL_CONTEXT]


def paired_cell(run: Run, refs: list[Run]) -> str:
    if (imported(run) or {}).get("role") == FULL_CONTEXT:
        return "(baseline)"
    cells = []
    for ref in refs:
        d = paired_difference(run.headline_scores, ref.headline_scores, clusters=ref.clusters)
        star = " *" if d["ci95_low"] > 0 or d["ci95_high"] < 0 else ""
        cells.append(f"vs {ref.label}: {d['diff']:+.3f} [{d['ci95_low']:+.3f}, {d['ci95_high']:+.3f}]{star}")
    return "; ".join(cells) or "no baseline with this answering model"


def audit_clean(run: Run) -> str:
    block = run.metrics.get("gold_audit") or {}
    if "unflagged" not in block:
        return "–"
    u = block["unflagged"]
    return f"{fmt(u.get(block['metric']))} (n={u['n']})"


def ranking_agreement(means: dict[str, list[float]]) -> str:
    """Kendall's tau between the systems' rankings under each pair of credits: how far the order of
    the systems depends on how an answer is credited (the judge-matrix question, at zero calls)."""
    from scipy.stats import kendalltau

    names = list(means)
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            tau = kendalltau(means[a], means[b]).statistic if len(means[a]) > 2 else math.nan
            pairs.append(f"{a} vs {b} {fmt(float(tau), 2)}")
    return "Kendall's tau between the rows' rankings under each credit: " + "; ".join(pairs) + "."


def published_table(runs: list[Run]) -> Table | None:
    """One row per imported run: published score, verdicts recomputed, re-scored headline (all and
    audit-clean), the model-free check alone, and the paired difference from the same answerer's
    full-context run. None when no run is imported."""
    rows_in = [r for r in runs if imported(r)]
    if not rows_in:
        return None
    head = ["system", "answering model", "source's judge", "n", "published score", "published verdicts (majority)",
            "re-scored: verdict AND grounding [95%]", "audit-clean", "grounding alone [95%]",
            "paired vs same-answerer full context [95%]", HEALTH]
    rows = []
    means: dict[str, list[float]] = {"published verdicts": [], "verdict AND grounding": [], "grounding alone": []}
    for r in rows_in:
        imp = imported(r) or {}
        raw_judge = imp.get("judge")
        judge = raw_judge if isinstance(raw_judge, dict) else {}
        raw = credit_scores(r, "correct")
        for key, scores in zip(means, (raw, r.headline_scores, credit_scores(r, "grounded")), strict=True):
            means[key].append(float(np.mean(list(scores.values()))) if scores else math.nan)
        rows.append([r.label, str(r.meta.get("answer_model", "?")), str(judge.get("model", "–")),
                     str(len(r.headline_scores)), str(judge.get("published_score", "–")),
                     fmt(float(np.mean(list(raw.values()))) if raw else math.nan),
                     interval(r.headline_scores, r.clusters), audit_clean(r),
                     interval(credit_scores(r, "grounded"), r.clusters),
                     paired_cell(r, baselines(r, rows_in)), r.health_cell])
    cls = protocol_of(rows_in[0].meta) if rows_in else None
    counted = f" ({title(cls)} {cls.headline_phrase})" if cls and cls.headline_phrase else ""
    data = f"{title(cls)}'s" if cls else "the data's"
    notes = [
        "Published score: as its source computed it (its answerer, prompt, judge and aggregation, e.g. the mean of "
        "three generous gpt-4o-mini judge runs); the sources differ in all four, so this column does not compare "
        "across rows.",
        "Published verdicts (majority): the same verdicts, one per question (the majority of its judge runs), over "
        f"the questions the headline counts{counted}.",
        "Re-scored: CORRECT only when the source's judge accepted the answer AND the model-free grounding check finds "
        "the gold's key content in it; grounding alone: the check without any judge, the one rule applied to every "
        "row alike. [95%] = percentile interval of a bootstrap over whole conversations (10 clusters).",
        f"Audit-clean: the re-scored headline on the questions no published audit of {data} gold flags.",
        "Paired: per-question difference from the full-context run answered by the same model (a dated snapshot "
        "suffix aside: the only rows where the answerer is held fixed), resampled by conversation; * = the interval "
        "excludes 0. The answer prompts still differ unless the names say otherwise (cot: a chain of thought; memos: "
        "a short answer).",
        ranking_agreement(means),
        HEALTH_NOTE]
    return Table("Imported answer sets: published and re-scored under one protocol", provenance(rows_in), head, rows,
                 notes)
