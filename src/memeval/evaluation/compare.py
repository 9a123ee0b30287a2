"""One comparison table from several run folders, plus paired bootstrap differences.

    memeval compare RUN_DIR [RUN_DIR ...] [--reference RUN_DIR] [--out table.md]

Rows are methods; columns are the groups the protocol's presentation declares (EpBench cue
buckets, LoCoMo categories, LongMemEval types) with its headline metric (F1, J, accuracy) ±
bootstrap std, then context tokens and cost. Runs that differ in answering model, judge, policy or
data version are flagged: their numbers do not compare.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .presentation import Presentation
from .protocol import fmt
from .report.setup_lines import setup_lines
from .report.tables import DEGENERATE_NOTE, group_name, star_allowed
from .runs.blocks import audit_line, repeats_line, weighted_line
from .runs.completeness import FINISH_SHORT
from .runs.paired import paired_differences, paired_notes
from .runs.rules import rule_summary
from .runs.scored import ReportError, Run, credit_label, load_run, load_runs


def _cell(m: dict[str, Any] | None, p: Presentation) -> str:
    """The headline ± std of one group (or overall), with precision / recall where defined."""
    if not m:
        return "–"
    cell = f"{fmt(m.get(p.metric))} ± {fmt(m.get(f'{p.metric}_std'))}"
    if "precision" in m and "recall" in m:
        cell += f" ({fmt(m['precision'])} / {fmt(m['recall'])})"
    return cell


def _retrieval_cells(m: dict[str, Any]) -> list[str]:
    """Gold recall at the cap and the failure-label split (evaluation/retrieval_diagnostics.py)."""
    ret = (m.get("retrieval") or {}).get("overall")
    if not ret:
        return ["–", "–"]
    labels = ret["labels"]
    split = " / ".join(str(labels.get(k, 0)) for k in ("correct", "generation_miss", "partial_retrieval",
                                                       "retrieval_miss"))
    return [f"{fmt(ret['gold_recall'])} ± {fmt(ret['gold_recall_std'])}", split]


def comparison_table(runs: list[Run]) -> str:
    """Headline by group, one row per run, under the first run's presentation."""
    p = runs[0].presentation
    seen = [g for r in runs for g in p.group_metrics(r.metrics)]
    groups = [g for g in p.ordered(seen) if g in seen]
    caveats = {k: v for r in runs for k, v in r.caveats.items()}
    head = ["method", "overall", *(group_name(p, runs[0].metrics, g, caveats) for g in groups), "gold recall",
            "correct / gen. / partial / retr. miss", "ctx tokens", "cost USD", "health"]
    lines = [f"Metric: {p.metric} ± bootstrap std (precision / recall where defined).", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in runs:
        m, ctx = r.metrics, r.mean_context_tokens
        by = p.group_metrics(m)
        name = str(r.meta.get("method", r.path.name))
        if r.completeness.partial:  # its numbers are over fewer questions than the other rows'
            name += f" (partial: {r.completeness.n_of_n()})"
        cells = [name, _cell(m[p.overall], p),
                 *(_cell(by.get(g), p) for g in groups), *_retrieval_cells(m),
                 fmt(ctx, 0) if ctx is not None else "–", f"{r.cost('fresh') + r.cost('cached'):.4f}",
                 r.health_cell]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def paired_lines(runs: list[Run], reference: Run, allow_degenerate: bool = False) -> list[str]:
    """Paired bootstrap differences against `reference` on the questions the headline counts
    (resampled as its intervals, Holm-corrected, with the minimum detectable difference); a run
    that failed a health check is not starred unless `allow_degenerate`."""
    if reference.completeness.partial:  # every pair would be on another question set than the table's
        return [f"No paired differences: the reference {reference.path} is {reference.completeness.describe()}; "
                f"{FINISH_SHORT}"]
    whole = [r for r in runs if not r.completeness.partial]
    skipped = [f"Not paired: {r.path} is {r.completeness.describe()}; {FINISH_SHORT}"
               for r in runs if r.completeness.partial]
    pairs = paired_differences(whole, reference)
    out = [*skipped, *([""] if skipped else []),
           f"Paired bootstrap differences vs {reference.path} (same questions, 1000 resamples):", "",
           "| method | n | diff | std | 95% CI | p | p (Holm) |  | health |", "|---|---|---|---|---|---|---|---|---|"]
    failed = False
    for r, d in pairs:
        significant = d["ci95_low"] > 0 or d["ci95_high"] < 0
        star = "*" if significant and star_allowed(r, reference, allow_degenerate) else ""
        failed |= r.failed or reference.failed
        out.append(f"| {r.meta.get('method')} | {d['n']} | {d['diff']:+.3f} | {d['diff_std']:.3f} "
                   f"| [{d['ci95_low']:+.3f}, {d['ci95_high']:+.3f}] | {d['p_two_sided']:.3f} | {d['p_holm']:.3f} "
                   f"| {star} | {r.health_cell.replace('|', '/')} |")
    out += ["", "* = the 95% interval excludes 0." + (f" {DEGENERATE_NOTE}" if failed and not allow_degenerate
                                                      else ""), *paired_notes(pairs, reference)]
    summary = rule_summary(whole, reference, lambda r, ref: star_allowed(r, ref, allow_degenerate))
    if summary is not None:  # the same differences under every rule the protocol scores side by side
        out += ["", "Under each scoring rule:", "", "| " + " | ".join(summary["header"]) + " |",
                "|" + "---|" * len(summary["header"]),
                *("| " + " | ".join(row) + " |" for row in summary["rows"]), "", *summary["sentences"]]
    return out


def statistics_lines(runs: list[Run]) -> list[str]:
    """Under the table, per run: the headline on the questions no gold audit flags, and a
    subset's overall weighted by population share (metrics.json `gold_audit`, `stratified`)."""
    label = runs[0].presentation.label
    lines = [f"- {x}" for r in runs if (x := r.partial_line)]
    lines += [f"- {r.meta.get('method', r.path.name)}: {x}" for r in runs
             for x in (audit_line(r.metrics.get("gold_audit"), label), repeats_line(r.metrics.get("repeats"), label),
                       weighted_line(r.metrics.get("stratified"), label)) if x]
    return ["", *lines] if lines else []


def _scoring(run: Run) -> str:
    """A run's policy, credit and grounding version (runs differing in any do not compare)."""
    parts = [str(run.metrics["policy"])] if "policy" in run.metrics else []
    if "credit" in run.metrics:
        parts.append(credit_label(run.metrics["credit"], run.meta.get("protocol")))
    return ", ".join(parts) or "-"


def provenance_lines(runs: list[Run]) -> list[str]:
    keys = ("answer_model", "judge_model", "data_version", "subset", "context_cap")
    out = []
    for key in keys:  # the subset as provenance() names it: "all; partial: 50 of 105 questions" for a partial run
        values = sorted({str(r.meta.get(key)) if key != "subset" else r.provenance()["subset"] for r in runs})
        flag = "" if len(values) == 1 else "  <-- DIFFERS: these runs do not compare"
        out.append(f"- {key}: {' | '.join(values)}{flag}")
    policies = sorted({_scoring(r) for r in runs})  # "lenient, grounded, grounding v4": any difference breaks the comparison
    out.append(f"- scoring: {' | '.join(policies)}" + ("" if len(policies) == 1 else "  <-- DIFFERS"))
    out += [f"- {line}" for line in setup_lines(runs)]  # experiment, indexing model, P/R convention
    if not any("gpt-4o" in str(r.meta.get("answer_model", "")).lower() for r in runs):
        out.append("- NOTE: not GPT-4o answering; not comparable to the published GPT-4o figures")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--reference", type=Path, default=None,
                    help="report paired bootstrap differences of every run against this one")
    ap.add_argument("--out", type=Path, default=None, help="also write the Markdown here")
    ap.add_argument("--allow-degenerate", action="store_true",
                    help="star significant differences of runs that failed a health check too")
    args = ap.parse_args(argv)
    try:
        runs = load_runs(args.runs, "compare")  # labelled: the method, or the folder when a method repeats
        reference = load_run(args.reference, "compare") if args.reference else None
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    parts = [*provenance_lines(runs), "", comparison_table(runs), *statistics_lines(runs)]
    if reference is not None:
        parts += ["", *paired_lines(runs, reference, args.allow_degenerate)]
    text = "\n".join(parts) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0

