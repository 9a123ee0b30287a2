"""The EpBench results table (Markdown) from metrics.json and meta, and how the comparison
report, compare and tracking show EpBench (PRESENTATION): rendering only."""

from __future__ import annotations

from typing import Any

from memeval.datasets.epbench import BUCKETS

from ..agreement import judge_block
from ..presentation import Column, Presentation, ReportTable
from ..protocol import fmt, provenance_header

PRESENTATION = Presentation(
    headline="overall.f1", label="F1", groups="buckets", group_label="cue bucket", group_field="bucket",
    group_order=BUCKETS, stats=("f1", "precision", "recall"),
    tables=(
        ReportTable(
            "EpBench F1 by cue bucket (GSW paper Table 2 shape)", "by_column",
            group_cell=Column("overall F1", "f1"),
            columns=(Column("F1 lenient", "by_policy.lenient.f1", "pm"), Column("F1 harsh", "by_policy.harsh.f1", "pm"),
                     Column("Simple Recall", "simple_recall"),
                     Column("Chronological Awareness", "chronological_awareness", "chronological"),
                     Column("judge (raw) vs matcher", "agreement", "agreement"), Column("n", "overall.n", "count")),
            notes=("Cells: F1 ± bootstrap std over questions (1000 seeded resamples); buckets = number of "
                   "matching events (cues) in the book; – = no question of that bucket in the subset.",
                   "F1 lenient / harsh: the same judgments under both rules (lenient caps the claimed items at "
                   "the gold count, so extra wrong items cost nothing; harsh divides by every claimed item, as the "
                   "GSW paper's Table 2 does); the bucket cells use the run's own rule (its header says which).",
                   "Judge (raw) vs matcher: share of gold-item credits on which the LLM judge's own verdicts "
                   "(before grounding) and the deterministic matcher agree (Cohen's κ); low agreement means "
                   "the judge's raw numbers are not to be trusted. "
                   "The grounded credit's agreement with the matcher (metrics.json agreement.kappa) is not the "
                   "judge's: grounding reads the matcher, so it agrees partly by construction.",
                   "Chronological Awareness: n/a where the run did not compute it.")),
        ReportTable("EpBench precision / recall by cue bucket", "by_column",
                    group_cell=Column("overall", "precision/recall", "pair")),
    ))


PR_NOTES = {
    "authors": ("P / R under the GSW authors' convention (a 0-cue question scores P = R = F1; an answer that "
                "claims nothing scores R = 0): overall and per-bucket P / R compare with the GSW paper's Table 2."),
    "defined_only": ("P / R averaged over the questions where each is defined (P needs a claimed item, R a gold "
                     "item): 0-cue questions have no R and answers that claim nothing no P, so overall and 0-cue "
                     "P / R do not compare with the GSW paper's Table 2 (its authors score a 0-cue question "
                     "P = R = F1); F1 does."),
}


def pr_convention(metrics: dict[str, Any]) -> str:
    """The run's P/R convention (metrics.json `pr_convention`; a run scored before it: defined_only)."""
    return str(metrics.get("pr_convention") or "defined_only")


def render_table(metrics: dict[str, Any], meta: dict[str, Any]) -> str:
    """The table whose header names answering model, judge, policy, credit and data version."""

    def cell(m: dict[str, Any]) -> str:
        return f"{fmt(m['f1'])} ± {fmt(m['f1_std'])} ({fmt(m['precision'])} / {fmt(m['recall'])}) n={m['n']}"

    credit = metrics.get("credit", "raw")
    headline_ag = metrics.get("agreement") or {}
    ag = judge_block(headline_ag) or {}  # the LLM judge's raw verdicts, never the grounded credit's
    agree = (f"{fmt(ag.get('item_agreement'), 2)} / κ {fmt(ag.get('kappa'), 2)} "
             f"({ag.get('n_items', 0)} items); questions {fmt(ag.get('question_agreement'), 2)}"
             ) if ag.get("n_questions") else "–"
    cols = [f"overall ({credit} credit)", "judge (raw) vs matcher", *metrics["buckets"].keys()]
    head = ("| method | " + " | ".join(cols)
            + " | simple recall | chronological awareness (latest / order) | ctx tokens | cost USD |")
    sep = "|" + "---|" * (len(cols) + 5)
    ca = metrics.get("chronological_awareness") or {}
    ca_cell = (f"{fmt(ca.get('ca'))} ± {fmt(ca.get('ca_std'))} ({fmt(ca.get('latest'))} n={ca.get('n_latest', 0)}"
               f" / {fmt(ca.get('order'))} n={ca.get('n_order', 0)})") if ca else "not computed"
    row = [cell(metrics["overall"]), agree, *(cell(metrics["buckets"][b]) for b in metrics["buckets"])]
    ctx = meta.get("mean_context_tokens")
    cost = meta.get("cost_usd")
    line = (f"| {meta.get('method', '?')} | " + " | ".join(row)
            + f" | {fmt(metrics['simple_recall'])} | {ca_cell} | {ctx if ctx is not None else '?'}"
            + f" | {cost if cost is not None else '?'} |")
    modes = "+".join(metrics.get("judge_mode") or ["one_pass"])
    official = "the official protocol" if credit == "raw" else "only credit the answer text supports"
    notes = ["", f"Cells: F1 ± bootstrap std (precision / recall), n questions; credit: **{credit}** "
             f"({official}); judge: {modes}.",
             "Judge (raw) vs matcher: share of gold-item credits (0 / 0.5 / 1) on which the LLM judge's "
             "own verdicts (before grounding) and the deterministic matcher agree / Cohen's kappa; "
             "questions: share with every credit equal (and, with nothing to find, both or neither seeing "
             "a claim)."]
    if credit != "raw" and headline_ag.get("n_questions"):
        notes.append(f"The {credit} credit vs the matcher (not a check of the judge: grounding reads the matcher): "
                     f"{fmt(headline_ag.get('item_agreement'), 2)} / κ {fmt(headline_ag.get('kappa'), 2)}; its "
                     "disagreements are listed in metrics.json (agreement.disagreements).")
    notes.append(PR_NOTES[pr_convention(metrics)])
    notes.append("Chronological awareness: mean of Latest (mean lenient F1, get == latest, buckets 2, "
                 "3-5, 6+) and Order (order judge on get == chronological with 2+ gold items: share "
                 "fully matched x mean Kendall tau, floored at 0); – where the subset has no such "
                 "question.")
    if ca.get("order_judge_missing_ids"):
        notes.append(f"Order judge missing on {len(ca['order_judge_missing_ids'])} question(s) (judged "
                     "before it existed): rerun stages=[judge] to include them in Order.")
    if ca.get("order_judge_failed_ids"):
        notes.append(f"Order judge failed on {len(ca['order_judge_failed_ids'])} question(s): excluded.")
    bp = metrics.get("by_policy") or {}
    if bp:
        notes.append("Overall F1 by scoring rule (same judgments): " + "; ".join(
            f"{p} {fmt(bp[p]['f1'])} ± {fmt(bp[p]['f1_std'])} (P {fmt(bp[p]['precision'])} / R {fmt(bp[p]['recall'])})"
            for p in bp) + f"; headline rule: {metrics['policy']}.")
    bc = metrics.get("by_credit") or {}
    if bc:
        notes.append("Overall F1 by credit: " + "; ".join(
            f"{c} {fmt(bc[c]['f1'])}" for c in ("raw", "grounded", "deterministic") if c in bc) + ".")
    gr = metrics.get("grounding") or {}
    if gr.get("n_checked"):
        notes.append(f"Grounding: {gr['unsupported_items']} claimed item(s) not in the answer text, "
                     f"{gr['credited_absent_gold']} credited gold item(s) absent from it, "
                     f"{gr['questions_changed']} question(s) changed.")
    if metrics.get("n_judge_failed"):
        notes.append(f"Judge failed on {metrics['n_judge_failed']} question(s): excluded, not scored 0.")
    if metrics.get("over_credited_ids"):
        notes.append(f"Judge credited more gold items than it identified on {len(metrics['over_credited_ids'])} "
                     "question(s): under the official formula their precision exceeds 1 (see over_credited_ids).")
    policy = f"{metrics['policy']}, {credit} credit, P/R {pr_convention(metrics)}"
    return "\n".join([provenance_header(meta, policy), "", head, sep, line, *notes]) + "\n"
