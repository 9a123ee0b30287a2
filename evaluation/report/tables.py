"""The report's tables (GSW paper Table 2 and Table 3 shapes, per-category, paired differences).

Each table is data (header + rows) so that Markdown and HTML are rendered from one source, and
each carries its provenance lines: a number never travels without the setup that produced it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..protocol import fmt
from ..runs.scored import PROVENANCE, ReportError, Run, incomparable
from ..stats import paired_difference

BUCKETS = ("0", "1", "2", "3-5", "6+")
LABELS = {"answer_model": "answering model", "judge_model": "judge", "policy": "policy",
          "credit": "credit", "data_version": "data version", "subset": "subset", "context_cap": "cap"}
# the metric each family's figures and scatter use
HEADLINE = {"epbench": ("f1", "F1"), "locomo": ("judge", "J"), "longmemeval": ("accuracy", "accuracy")}
GROUPS = {"epbench": ("buckets", "cue bucket"), "locomo": ("categories", "category"),
          "longmemeval": ("types", "question type")}


@dataclass
class Table:
    title: str
    provenance: list[str]
    header: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)


def provenance(runs: list[Run]) -> list[str]:
    """The settings the runs share on one line; each setting on which they differ, flagged."""
    same, differ = [], []
    for key in PROVENANCE:
        values = list(dict.fromkeys(r.provenance()[key] for r in runs))
        if len(values) == 1:
            same.append(f"{LABELS[key]}: {values[0]}")
        else:
            differ.append(f"{LABELS[key]}: {' | '.join(values)}  **DIFFERS: these numbers do not compare**")
    lines = ["; ".join(same), *differ] if same else differ
    if not any("gpt-4o" in r.provenance()["answer_model"].lower() for r in runs):
        lines.append("not GPT-4o answering: not comparable to the published GPT-4o figures")
    return lines


def pm(m: dict[str, Any] | None, key: str) -> str:
    if not m or m.get(key) is None:
        return "–"
    return f"{fmt(m.get(key))} ± {fmt(m.get(f'{key}_std'))}"


def chronological(metrics: dict[str, Any]) -> str:
    """Chronological Awareness when the run computed it, "n/a" otherwise. Accepts the EpBench
    protocol's dict ({"ca", "ca_std", "latest", "order", ...}) or a plain float (+ "_std" key)."""
    v = metrics.get("chronological_awareness")
    if v is None:
        return "n/a"
    if isinstance(v, dict):
        key = next((k for k in ("ca", "score", "value") if k in v), None)
        if key is None or v[key] is None:
            return "n/a"
        std = v.get(f"{key}_std", v.get("std"))
        cell = f"{fmt(v[key])} ± {fmt(std)}" if std is not None else fmt(v[key])
        if "latest" in v or "order" in v:
            cell += f" (latest {fmt(v.get('latest'))} / order {fmt(v.get('order'))})"
        return cell
    std = metrics.get("chronological_awareness_std")
    return f"{fmt(v)} ± {fmt(std)}" if std is not None else fmt(v)


def agreement_cell(metrics: dict[str, Any]) -> str:
    ag = metrics.get("agreement") or {}
    if not ag.get("n_questions"):
        return "–"
    return f"{fmt(ag.get('item_agreement'), 2)} (κ {fmt(ag.get('kappa'), 2)}, {ag.get('n_items', 0)} items)"


def table2(runs: list[Run]) -> list[Table]:
    """EpBench: F1 ± std by cue bucket, Simple Recall, Chronological Awareness; then P / R."""
    head = ["method", "overall F1", *BUCKETS, "Simple Recall", "Chronological Awareness",
            "judge agreement", "n"]
    rows = []
    pr_rows = []
    for r in runs:
        m = r.metrics
        b = m.get("buckets", {})
        rows.append([r.label, pm(m["overall"], "f1"), *(pm(b.get(k), "f1") for k in BUCKETS),
                     pm({"s": m.get("simple_recall"), "s_std": m.get("simple_recall_std")}, "s"),
                     chronological(m), agreement_cell(m), str(m["overall"].get("n", "–"))])
        pr_rows.append([r.label, *(f"{fmt(x.get('precision'))} / {fmt(x.get('recall'))}" if x else "–"
                                   for x in (m["overall"], *(b.get(k) for k in BUCKETS)))])
    notes = ["Cells: F1 ± bootstrap std over questions (1000 seeded resamples); buckets = number of "
             "matching events (cues) in the book; – = no question of that bucket in the subset.",
             "Judge agreement: share of gold-item credits on which the LLM judge and the "
             "deterministic matcher agree (Cohen's κ); low agreement means the judge's numbers are "
             "not to be trusted.",
             "Chronological Awareness: n/a where the run did not compute it."]
    return [Table("EpBench F1 by cue bucket (GSW paper Table 2 shape)", provenance(runs), head, rows, notes),
            Table("EpBench precision / recall by cue bucket", provenance(runs),
                  ["method", "overall", *BUCKETS], pr_rows)]


def table3(runs: list[Run]) -> Table:
    """Efficiency: context tokens per question, index and query tokens, cost fresh vs cached."""
    head = ["method", "context tokens / question", "index tokens", "query tokens", "judge tokens",
            "calls fresh / cached", "cost USD fresh", "cost USD cached", "cost USD total"]
    rows = []
    for r in runs:
        t = r.usage.get("totals", {})
        ctx = r.mean_context_tokens
        rows.append([r.label, fmt(ctx, 0) if ctx is not None else "–",
                     f"{r.stage_tokens(('index',)):,}", f"{r.stage_tokens(('retrieve', 'answer')):,}",
                     f"{r.stage_tokens(('judge',)):,}",
                     f"{t.get('fresh', {}).get('calls', 0)} / {t.get('cached', {}).get('calls', 0)}",
                     f"{r.cost('fresh'):.4f}", f"{r.cost('cached'):.4f}",
                     f"{r.cost('fresh') + r.cost('cached'):.4f}"])
    embedders = " | ".join(dict.fromkeys(str(r.meta.get("embedder", "–")) for r in runs))
    prices = " | ".join(dict.fromkeys(str(r.usage.get("price_table", "–")) for r in runs))
    unpriced = sorted({m for r in runs for m in r.usage.get("unpriced_models", [])})
    notes = [f"Embedder: {embedders}; price table: {prices}. Tokens are o200k_base counts of what was "
             "sent and received; query = retrieve + answer stages.",
             "Cached cost is what those calls cost when first paid; a rerun pays nothing for them."]
    if unpriced:
        notes.append(f"Unpriced models (counted as 0 USD): {', '.join(unpriced)}.")
    return Table("Efficiency and cost (GSW paper Table 3 shape)", provenance(runs), head, rows, notes)


def locomo_table(runs: list[Run]) -> Table:
    head = ["method", "category", "n", "F1 ± std", "BLEU-1 ± std", "J ± std", "evidence recall"]
    rows = []
    for r in runs:
        names = r.metrics.get("category_names", {})
        groups = [*((f"{c} {names.get(c, '')}".strip(), m) for c, m in r.metrics.get("categories", {}).items()),
                  ("overall", r.metrics["overall"])]
        rows += [[r.label, g, str(m.get("n", "–")), pm(m, "f1"), pm(m, "bleu1"), pm(m, "judge"),
                  fmt(m.get("evidence_recall"))] for g, m in groups]
    return Table("LoCoMo per category", provenance(runs), head, rows,
                 ["J = LLM judge accuracy; F1 = official token F1; BLEU-1 = unigram BLEU."])


def longmemeval_table(runs: list[Run]) -> Table:
    head = ["method", "question type", "n", "accuracy ± std", "evidence recall"]
    rows = []
    for r in runs:
        groups = [*r.metrics.get("types", {}).items(), ("abstention", r.metrics.get("abstention")),
                  ("overall", r.metrics["overall"])]
        rows += [[r.label, g, str((m or {}).get("n", "–")), pm(m, "accuracy"),
                  fmt((m or {}).get("evidence_recall"))] for g, m in groups]
        rows.append([r.label, "task-averaged", "", fmt(r.metrics.get("task_averaged_accuracy")), ""])
    return Table("LongMemEval per question type", provenance(runs), head, rows)


def overall_table(runs: list[Run]) -> Table:
    """Any other protocol (e.g. custom datasets): the overall numbers it reports."""
    stats = list(dict.fromkeys(k for r in runs for k, v in r.metrics["overall"].items()
                               if isinstance(v, int | float) and not k.endswith("_std") and k != "n"))
    head = ["method", "n", *stats]
    rows = [[r.label, str(r.metrics["overall"].get("n", "–")), *(pm(r.metrics["overall"], s) for s in stats)]
            for r in runs]
    return Table("Overall", provenance(runs), head, rows, ["± = bootstrap std over questions."])


def paired_table(runs: list[Run], reference: Run) -> Table:
    """Each run minus the reference on the same questions; refuses incomparable runs."""
    problems = [f"{r.path}: {'; '.join(why)}" for r in runs if r is not reference
                for why in [incomparable(r, reference)] if why]
    if problems:
        raise ReportError(f"cannot compare against the reference {reference.path}:\n  " + "\n  ".join(problems)
                          + "\nCompare runs of one dataset, question subset, judge, data version and policy.")
    ref_scores = reference.question_scores
    head = ["method", "n", "mean", "reference mean", "difference", "std", "95% interval", "p", ""]
    rows = []
    for r in runs:
        if r is reference:
            continue
        d = paired_difference(r.question_scores, ref_scores)
        sig = "*" if d["ci95_low"] > 0 or d["ci95_high"] < 0 else ""
        rows.append([r.label, str(d["n"]), fmt(d["mean_a"]), fmt(d["mean_b"]), f"{d['diff']:+.3f}",
                     fmt(d["diff_std"]), f"[{d['ci95_low']:+.3f}, {d['ci95_high']:+.3f}]",
                     f"{d['p_two_sided']:.3f}", sig])
    metric = HEADLINE.get(reference.family, ("score", "score"))[1]
    return Table(f"Paired differences in per-question {metric} against {reference.label}",
                 provenance([reference, *runs]), head, rows,
                 ["Paired bootstrap over the shared questions (1000 seeded resamples of question ids); "
                  "* = the 95% interval excludes 0."])


def as_frame(t: Table) -> Any:
    """The table as a pandas DataFrame (for notebooks)."""
    import pandas as pd

    return pd.DataFrame(t.rows, columns=t.header)
