"""The report's tables: the ones each protocol's presentation declares (EpBench's GSW paper
Table 2 shape, LoCoMo per category, ...), Table 3's efficiency and cost, paired differences.

Each table is data (header + rows) so that Markdown and HTML are rendered from one source, and
each carries its provenance lines: a number never travels without the setup that produced it.
No family is named here: the declared tables (evaluation/presentation.py) say what to show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..agreement import judge_block
from ..phrases import protocol_of
from ..presentation import Column, Presentation, ReportTable
from ..protocol import Protocol, fmt
from ..runs.paired import paired_differences, paired_notes
from ..runs.rules import rule_summary
from ..runs.scored import PROVENANCE, ReportError, Run, incomparable
from .prices import Reference, api_equivalent, load_reference
from .setup_lines import setup_lines

HEALTH = "health"  # every table's last column: `memeval health` status and first failing message
LABELS = {"answer_model": "answering model", "judge_model": "judge", "policy": "policy",
          "credit": "credit", "data_version": "data version", "subset": "subset", "context_cap": "cap"}


@dataclass
class Table:
    title: str
    provenance: list[str]
    header: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)


# A stratified subset's overall columns, as the report's figures and the explorer's charts name them:
# the plain mean of its questions and, beside it, the population-weighted overall (the papers' headline).
WEIGHTED = "weighted overall"  # the weighted column's key, beside the group keys and "overall"
WEIGHTED_NOTE = ("overall (weighted): each {what}'s mean weighted by its share of the population\n"
                 "the questions were drawn from; overall (unweighted): the plain mean of these questions")


def overall_columns(weighted: bool) -> dict[str, str]:
    """key -> label of the overall columns: "overall" alone, or for a stratified subset
    (`weighted`) the unweighted and the weighted overall."""
    return {"overall": "overall (unweighted)", WEIGHTED: "overall (weighted)"} if weighted else {"overall": "overall"}


def overall_axis(label: str, weighted: bool) -> str:
    """The score axis of a chart that plots one overall per run."""
    return f"overall {label}" + (", weighted by population share" if weighted else "")


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
    lines += setup_lines(runs)  # experiment, indexing model, P/R convention: where the runs record them
    if not any("gpt-4o" in r.provenance()["answer_model"].lower() for r in runs):
        lines.append("not GPT-4o answering: not comparable to the published GPT-4o figures")
    return lines


def pm(m: dict[str, Any] | None, key: str) -> str:
    if not m or m.get(key) is None:
        return "–"
    return f"{fmt(m.get(key))} ± {fmt(m.get(f'{key}_std'))}"


def chronological(metrics: dict[str, Any], key: str = "chronological_awareness") -> str:
    """Chronological Awareness when the run computed it, "n/a" otherwise. Accepts the EpBench
    protocol's dict ({"ca", "ca_std", "latest", "order", ...}) or a plain float (+ "_std" key)."""
    v = metrics.get(key)
    if v is None:
        return "n/a"
    if isinstance(v, dict):
        field = next((k for k in ("ca", "score", "value") if k in v), None)
        if field is None or v[field] is None:
            return "n/a"
        std = v.get(f"{field}_std", v.get("std"))
        cell = f"{fmt(v[field])} ± {fmt(std)}" if std is not None else fmt(v[field])
        if "latest" in v or "order" in v:
            cell += f" (latest {fmt(v.get('latest'))} / order {fmt(v.get('order'))}"
            if "order_uncredited" in v and fmt(v["order_uncredited"]) != fmt(v.get("order")):
                cell += f"; {fmt(v['order_uncredited'])} counting uncredited items"
            cell += ")"
        return cell
    std = metrics.get(f"{key}_std")
    return f"{fmt(v)} ± {fmt(std)}" if std is not None else fmt(v)


def agreement_cell(metrics: dict[str, Any], key: str = "agreement") -> str:
    ag = judge_block(metrics.get(key)) or {}  # the LLM judge's own (raw), never a grounded credit's
    if not ag.get("n_questions"):
        return "–"
    return f"{fmt(ag.get('item_agreement'), 2)} (κ {fmt(ag.get('kappa'), 2)}, {ag.get('n_items', 0)} items)"


def cell(column: Column, parent: dict[str, Any] | None, key: str | None = None) -> str:
    """One cell: `key` (default `column.key`) of `parent`, a group's or the run's metrics, shown
    as `column.cell` says."""
    key = key or column.key
    m = parent or {}
    if column.cell == "pm":
        return pm(parent, key)
    if column.cell == "value":
        return fmt(m.get(key))
    if column.cell == "count":
        return str(m.get(key, "–"))
    if column.cell == "pair":
        a, b = key.split("/")
        return f"{fmt(m.get(a))} / {fmt(m.get(b))}" if parent else "–"
    if column.cell == "chronological":
        return chronological(m, key)
    return agreement_cell(m, key)


def path_cell(column: Column, metrics: dict[str, Any]) -> str:
    """A cell whose key is a key path into the run's metrics ("simple_recall", "overall.n")."""
    *parents, key = column.key.split(".")
    node: Any = metrics
    for name in parents:
        node = node.get(name) if isinstance(node, dict) else None
    return cell(column, node if isinstance(node, dict) else None, key)


def group_name(p: Presentation, metrics: dict[str, Any], group: str, caveats: dict[str, str] | None = None) -> str:
    """A group as tables and figures name it: by its name where the protocol names groups
    (LoCoMo's "multi-hop", not "1"), with its caveat where its headline cell is not the headline."""
    names = metrics.get(p.group_names, {}) if p.group_names else {}
    label = str(names.get(group) or group)
    caveat = (caveats or {}).get(group)
    return f"{label} ({caveat})" if caveat else label


def _by_column(spec: ReportTable, p: Presentation, runs: list[Run]) -> tuple[list[str], list[list[str]]]:
    assert spec.group_cell is not None
    groups = p.ordered([g for r in runs for g in p.group_metrics(r.metrics)]) if p.groups else []
    caveats = {k: v for r in runs for k, v in r.caveats.items()}
    head = ["method", spec.group_cell.label, *(group_name(p, runs[0].metrics, g, caveats) for g in groups),
            *(c.label for c in spec.columns), HEALTH]
    rows = []
    for r in runs:
        m = r.shown_metrics
        by = p.group_metrics(m)
        rows.append([r.label, cell(spec.group_cell, m.get(p.overall)),
                     *(cell(spec.group_cell, by.get(g)) for g in groups),
                     *(path_cell(c, m) for c in spec.columns), r.health_cell])
    return head, rows


def _by_row(spec: ReportTable, p: Presentation, runs: list[Run]) -> tuple[list[str], list[list[str]]]:
    head = ["method", p.group_label, *(c.label for c in spec.columns), HEALTH]
    under = next((i for i, c in enumerate(spec.columns) if c.key == p.metric), 0)
    rows = []
    for r in runs:
        m = r.shown_metrics
        overall = "overall" + (f" ({r.caveats['overall']})" if "overall" in r.caveats else "")
        groups = [*((group_name(p, m, g, r.caveats), gm) for g, gm in p.group_metrics(m).items()),
                  *((label, m.get(key)) for label, key in spec.extra_groups), (overall, m[p.overall])]
        # the health mark goes on the method's overall row (one mark per method, where the headline is)
        rows += [[r.label, g, *(cell(c, gm) for c in spec.columns), r.health_cell if gm is m[p.overall] else ""]
                 for g, gm in groups]
        for s in spec.summary:
            values = [""] * len(spec.columns)
            values[under] = cell(s, m)
            rows.append([r.label, s.label, *values, ""])
    return head, rows


def _notes(spec: ReportTable, p: Presentation, runs: list[Run]) -> list[str]:
    """The declared notes, then what this report adds: group names, corrected statistics, health."""
    notes = list(spec.notes)
    names = runs[0].metrics.get(p.group_names, {}) if p.group_names else {}
    if names and spec.layout == "by_row":
        seen = [g for g in dict.fromkeys(g for r in runs for g in p.group_metrics(r.metrics))]
        notes.append(f"{p.group_label.capitalize()} numbers: " + ", ".join(f"{names.get(g, g)} = {g}" for g in seen)
                     + "; the policy line names the ones in overall.")
    caveats = {k: v for r in runs for k, v in r.caveats.items()}
    if caveats:
        notes.append("A group marked in brackets is not scored as the column says: "
                     + "; ".join(f"{group_name(p, runs[0].metrics, g)}: {v}" for g, v in caveats.items()) + ".")
    if any(isinstance(r.shown_metrics.get("chronological_awareness"), dict)
           and "order_uncredited" in r.shown_metrics["chronological_awareness"] for r in runs) \
            and any(c.cell == "chronological" for c in spec.columns):
        notes.append("Chronological Awareness: Order counts an answer item only where the headline credit "
                     "credits its gold item (the order judge also places uncredited items; metrics.json's "
                     "Order, which counts them, is shown after it where it differs).")
    notes += [x for r in runs if (x := r.partial_line)]  # evaluation/runs/completeness.py
    notes.append(HEALTH_NOTE)
    return notes


HEALTH_NOTE = ("Health: `memeval health` status of the run (index, context, answer and judge checks) and its "
               "first failing (else warning) message; \"not checked\" = the run has no health.json.")


def declared_table(spec: ReportTable, p: Presentation, runs: list[Run]) -> Table:
    """A table as the protocol's presentation declares it (see evaluation/presentation.py)."""
    head, rows = (_by_column if spec.layout == "by_column" else _by_row)(spec, p, runs)
    return Table(spec.title, provenance(runs), head, rows, _notes(spec, p, runs))


def dataset_tables(runs: list[Run]) -> list[Table]:
    """The tables of one dataset's runs: those their protocol declares, else the overall numbers."""
    p = runs[0].presentation
    return [declared_table(spec, p, runs) for spec in p.tables] or [overall_table(runs)]


def table3(runs: list[Run], reference: Reference | None = None) -> Table:
    """Efficiency: context tokens per question, index and query tokens, cost paid and what the
    tokens would cost at a reference API model's prices (the local models cost 0)."""
    ref = reference or load_reference()
    head = ["method", "context tokens / question", "index tokens", "index calls", "query tokens", "judge tokens",
            "calls fresh / cached (this run)", "cost USD paid fresh / cached", ref.label, HEALTH]
    rows = []
    for r in runs:
        t = r.usage.get("totals", {})
        ctx = r.mean_context_tokens
        iu = r.index_usage
        mark = " †" if iu.unrecorded else ""
        rows.append([r.label, fmt(ctx, 0) if ctx is not None else "–",
                     f"{iu.tokens:,}{mark}", f"{iu.calls:,}{mark}",
                     f"{r.stage_tokens(('retrieve', 'answer')):,}", f"{r.stage_tokens(('judge',)):,}",
                     f"{t.get('fresh', {}).get('calls', 0)} / {t.get('cached', {}).get('calls', 0)}",
                     f"{r.cost('fresh'):.4f} / {r.cost('cached'):.4f}",
                     f"{api_equivalent(r, ref)['total']:.4f}", r.health_cell])
    embedders = " | ".join(dict.fromkeys(str(r.meta.get("embedder", "–")) for r in runs))
    prices = " | ".join(dict.fromkeys(str(r.usage.get("price_table", "–")) for r in runs))
    unpriced = sorted({m for r in runs for m in r.usage.get("unpriced_models", [])})
    notes = [f"Embedder: {embedders}; price table: {prices}. Tokens are o200k_base counts of what was "
             "sent and received; query = retrieve + answer stages.",
             "Index tokens and calls: what building the index took, from the index folder's own usage record "
             "(index_usage.json; the session with the most calls per corpus), so a run that reused a stored "
             "index shows its build too; fresh and cached calls alike.",
             "Cost paid: fresh = paid by this run; cached = what those calls cost when first paid.",
             f"{ref.label}: every token the run needed (index included, fresh and cached) priced at {ref.chat} "
             f"(chat) and {ref.embedder} (the run's embedder's calls); input and output at their own prices, "
             "no cached-input or batch discount. Cached embedding calls record no tokens, so embedding cost is "
             "a lower bound."]
    if any(" †" in row[2] for row in rows):
        notes.append("† No index usage record (the index was built before records existed, or its folder is "
                     "not here): this run's own index-stage calls, 0 where it reused a stored index; "
                     "API-equivalent USD then leaves the index out.")
    if unpriced:
        notes.append(f"Unpriced models (counted as 0 USD paid): {', '.join(unpriced)}.")
    notes.append(HEALTH_NOTE)
    cls = protocol_of(runs[0].meta) if runs else None
    return Table((cls or Protocol).efficiency_title, provenance(runs), head, rows, notes)


def overall_table(runs: list[Run]) -> Table:
    """Any other protocol (e.g. custom datasets): the overall numbers it reports."""
    stats = list(dict.fromkeys(k for r in runs for k, v in r.metrics["overall"].items()
                               if isinstance(v, int | float) and not k.endswith("_std") and k != "n"))
    label = runs[0].presentation.label
    rules = list(dict.fromkeys(p for r in runs for p in (r.metrics.get("by_policy") or {})))
    head = ["method", "n", *stats, *(f"{label} {p}" for p in rules), HEALTH]
    rows = [[r.label, str(r.metrics["overall"].get("n", "–")), *(pm(r.metrics["overall"], s) for s in stats),
             *(pm((r.metrics.get("by_policy") or {}).get(p), label) for p in rules), r.health_cell] for r in runs]
    notes = ["± = bootstrap std over questions.", HEALTH_NOTE]
    if rules:
        notes.insert(1, f"{label} {' / '.join(rules)}: the same judgments under each scoring rule (lenient caps the "
                        "claimed items at the gold count; harsh divides by every claimed item).")
    return Table("Overall", provenance(runs), head, rows, notes)


def star_allowed(run: Run, reference: Run, allow_degenerate: bool = False) -> bool:
    """Whether a significant difference of `run` against `reference` may be starred: never when
    either failed a health check (a difference between runs that mean nothing is not a finding),
    unless the reader asks for it (`--allow-degenerate`)."""
    return allow_degenerate or not (run.failed or reference.failed)


DEGENERATE_NOTE = ("Differences involving a run that failed a health check are not starred, however small "
                   "p is: such a run's numbers may mean nothing (its health column says why). "
                   "`memeval report --allow-degenerate` stars them anyway.")


def paired_table(runs: list[Run], reference: Run, allow_degenerate: bool = False) -> Table:
    """Each run minus the reference on the same questions (those the headline counts);
    refuses incomparable runs."""
    problems = [f"{r.path}: {'; '.join(why)}" for r in runs if r is not reference
                for why in [incomparable(r, reference)] if why]
    if problems:
        raise ReportError(f"cannot compare against the reference {reference.path}:\n  " + "\n  ".join(problems)
                          + "\nCompare runs of one dataset, question subset, judge, data version and policy.")
    pairs = paired_differences(runs, reference)  # resampled as the reference's intervals; Holm; MDE
    head = ["method", "n", "mean", "reference mean", "difference", "std", "95% interval", "p", "p (Holm)", "",
            HEALTH]
    rows = []
    withheld: list[str] = []
    for r, d in pairs:
        significant = d["ci95_low"] > 0 or d["ci95_high"] < 0
        allowed = star_allowed(r, reference, allow_degenerate)
        sig = "*" if significant and allowed else ""
        if significant and not allowed:
            withheld.append(r.label)
        rows.append([r.label, str(d["n"]), fmt(d["mean_a"]), fmt(d["mean_b"]), f"{d['diff']:+.3f}",
                     fmt(d["diff_std"]), f"[{d['ci95_low']:+.3f}, {d['ci95_high']:+.3f}]",
                     f"{d['p_two_sided']:.3f}", f"{d['p_holm']:.3f}", sig, r.health_cell])
    label = reference.presentation.label
    scope = reference.caveats.get("overall")
    notes = ["Paired bootstrap over the shared questions the headline counts; * = the 95% interval excludes 0.",
             *paired_notes(pairs, reference)]
    if any(r.failed for r in runs) and not allow_degenerate:
        notes.append(DEGENERATE_NOTE + (f" Not starred though the interval excludes 0: {', '.join(withheld)}."
                                        if withheld else ""))
    elif allow_degenerate and any(r.failed for r in runs):
        notes.append("--allow-degenerate: differences involving a run that failed a health check are starred "
                     "like any other; read its health column first.")
    notes.append(f"Reference health: {reference.health_cell}.")
    return Table(f"Paired differences in per-question {label}{f' ({scope})' if scope else ''} "
                 f"against {reference.label}", provenance([reference, *runs]), head, rows, notes)


def rules_table(runs: list[Run], reference: Run, allow_degenerate: bool = False) -> Table | None:
    """The paired differences under every rule the protocol scores side by side (None: one rule),
    with a sentence for each difference whose sign or star changes between the rules."""
    summary = rule_summary(runs, reference, lambda r, ref: star_allowed(r, ref, allow_degenerate))
    if summary is None:
        return None
    notes = [*summary["sentences"],
             "Same questions, judgments and resampling as the paired table above; only the rule that turns "
             "a judgment into a per-question score differs. * = the 95% interval excludes 0 (withheld, as "
             "above, where a run failed a health check).", f"Reference health: {reference.health_cell}."]
    return Table(f"Paired differences against {reference.label} under each scoring rule",
                 provenance([reference, *runs]), summary["header"], summary["rows"], notes)


def as_frame(t: Table) -> Any:
    """The table as a pandas DataFrame (for notebooks)."""
    import pandas as pd

    return pd.DataFrame(t.rows, columns=t.header)
