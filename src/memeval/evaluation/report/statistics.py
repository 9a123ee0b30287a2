"""The report's tables of the statistics blocks (evaluation/runs/blocks.py): the headline on all
questions and on those no gold audit flags, and a subset's overall weighted by each stratum's
share of its population beside the unweighted mean. A table appears only when a run has it."""

from __future__ import annotations

from ..protocol import fmt
from ..runs.blocks import weighted_std_text
from ..runs.scored import Run
from .tables import HEALTH, HEALTH_NOTE, Table, provenance


def audit_table(runs: list[Run]) -> Table | None:
    with_block = [r for r in runs if r.metrics.get("gold_audit")]
    if not with_block:
        return None
    label = runs[0].presentation.label
    rows, notes = [], []
    for r in with_block:
        b = r.metrics["gold_audit"]
        if "all" not in b:
            rows.append([r.label, "–", "–", "–", "–", "–", r.health_cell])
            notes.append(f"{r.label}: {b.get('note', 'no split')}.")
            continue
        m, a, u = b["metric"], b["all"], b["unflagged"]
        rows.append([r.label, fmt(a[m]), str(a["n"]), fmt(u[m]), str(u["n"]), str(a["n"] - u["n"]), r.health_cell])
    first = with_block[0].metrics["gold_audit"]
    notes.append(HEALTH_NOTE)
    notes.insert(0, f"Flagged: {first['rule']} ({first['source']}). The audits give no corrected gold: "
                    "the unflagged column leaves those questions out.")
    return Table(f"{label} on all questions and on those no gold audit flags", provenance(runs),
                 ["method", f"{label} (all)", "n (all)", f"{label} (unflagged)", "n (unflagged)", "flagged", HEALTH],
                 rows, notes)


def weighted_table(runs: list[Run]) -> Table | None:
    with_block = [r for r in runs if r.metrics.get("stratified")]
    if not with_block:
        return None
    label = runs[0].presentation.label
    rows, notes = [], []
    for r in with_block:
        b = r.metrics["stratified"]
        if "weighted" not in b:
            rows.append([r.label, "–", "–", "–", "–", r.health_cell])
            notes.append(f"{r.label}: {b.get('note', 'not computed')}.")
            continue
        rows.append([r.label, f"{fmt(b['weighted'])} ± {weighted_std_text(b)}", fmt(b["unweighted"]),
                     str(b["n"]), ", ".join(f"{s}: {w:.2f} ({b['sample'][s]})" for s, w in b["weights"].items()),
                     r.health_cell])
    notes.append(HEALTH_NOTE)
    b = next((r.metrics["stratified"] for r in with_block if "weighted" in r.metrics["stratified"]), None)
    if b is not None:
        notes.insert(0, f"Weighted: each {b['key']}'s mean {label} weighted by its share of the "
                        f"{b['population_n']} questions the subset was drawn from (± = stratified bootstrap std, "
                        "1000 seeded draws within each stratum); unweighted: the plain mean of the subset, "
                        "which over-weights the strata the subset over-samples.")
    return Table(f"Overall {label} weighted by population share (stratified subset)", provenance(runs),
                 ["method", f"{label} weighted ± std", f"{label} unweighted", "n", "weights (questions in subset)",
                  HEALTH],
                 rows, notes)


def with_resampling_note(tables: list[Table], runs: list[Run]) -> list[Table]:
    """The declared tables, each with a line saying what its ± resampled where that is not
    plain questions or the protocol notes a limit (LoCoMo: one conversation understates it)."""
    seen: dict[str, None] = {}
    for r in runs:
        st = r.metrics.get("statistics") or {}
        unit = st.get("resampling_unit", "question")
        if unit != "question":
            seen[f"± = cluster bootstrap over {unit}s (questions of one {unit} are drawn together)."] = None
        if st.get("note"):
            seen[f"Note on the ±: {st['note']}."] = None
    for t in tables:
        t.notes.extend(seen)
    return tables


def repeats_table(runs: list[Run]) -> Table | None:
    """The headline with and without the questions that repeat an earlier one (metrics.json `repeats`)."""
    with_block = [r for r in runs if (r.metrics.get("repeats") or {}).get("all")]
    if not with_block:
        return None
    label = runs[0].presentation.label
    rows = []
    for r in with_block:
        b = r.metrics["repeats"]
        m, a, w = b["metric"], b["all"], b["without_repeats"]
        rows.append([r.label, fmt(a[m]), str(a["n"]), fmt(w[m]), str(w["n"]), r.health_cell])
    pairs = ", ".join(f"{q} repeats {first}" for q, first in with_block[0].metrics["repeats"]["repeats"].items())
    notes = [f"Repeats: questions with the same text and evidence as an earlier one ({pairs}); they count one "
             "question twice, or ask it twice with golds that contradict each other (one a category-5 trap), so "
             "every method loses one of the two.", HEALTH_NOTE]
    return Table(f"{label} with and without repeated questions", provenance(runs),
                 ["method", f"{label} (all)", "n (all)", f"{label} (without repeats)", "n (without)", HEALTH], rows, notes)


def statistics_tables(runs: list[Run]) -> list[Table]:
    return [t for t in (audit_table(runs), weighted_table(runs), repeats_table(runs)) if t is not None]
