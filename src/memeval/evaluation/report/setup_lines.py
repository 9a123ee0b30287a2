"""The provenance lines a report table adds for settings that may differ per method: the
experiment (and its deviations from the reference it reproduces), the indexing model, and
EpBench's precision/recall convention, and the questions whose whole corpus fits the cap.

Each line appears only when some run records its setting (runs made before a setting was
recorded show none, so a report of older runs reads as it did). A setting every run of a
comparison must share (experiment, P/R convention) is flagged when the runs differ; the indexing
model may differ per method by design (the paper experiment indexes HippoRAG 2 with gpt-4o-mini),
so it is listed, never flagged.
"""

from __future__ import annotations

from typing import Any

from ..phrases import protocol_of, title
from ..protocol import NO_REFERENCE, cap_holds_corpus_text

DIFFERS = "**DIFFERS: these numbers do not compare**"


def _shared(label: str, values: list[str]) -> str:
    distinct = list(dict.fromkeys(values))
    return f"{label}: {distinct[0]}" if len(distinct) == 1 else f"{label}: {' | '.join(distinct)}  {DIFFERS}"


def experiment_lines(runs: list[Any]) -> list[str]:
    """The experiment the runs were made under, its reference (or that there is none), each run's
    deviations from it and what the reference does not say."""
    recorded = [(r.label, r.meta.get("experiment")) for r in runs]
    if not any(isinstance(e, dict) and e.get("name") for _, e in recorded):
        return []
    names = [str(e.get("name")) if isinstance(e, dict) else "not recorded" for _, e in recorded]
    lines = [_shared("experiment", names)]
    exps = [e for _, e in recorded if isinstance(e, dict)]
    if not any("deviations" in e for e in exps):
        lines[0] += f" ({NO_REFERENCE})"
    else:
        lines.append(_shared("reference", [str(e.get("reference") or NO_REFERENCE) for e in exps]))
    devs = [f"{label}: {'; '.join(e['deviations'])}" for label, e in recorded
            if isinstance(e, dict) and e.get("deviations")]
    if devs:
        lines.append("deviations from the experiment's reference: " + " | ".join(devs))
    silent = list(dict.fromkeys(s for e in exps for s in e.get("silent") or []))
    if silent:
        lines.append("the reference does not say: " + "; ".join(silent))
    return lines


def index_model_line(runs: list[Any]) -> list[str]:
    """The runs indexed by a model that is not their answering model, by name."""
    own = [f"{r.label} {r.meta['index_model']}" for r in runs
           if r.meta.get("index_model") and r.meta.get("index_model") != r.meta.get("answer_model")]
    if not own:
        return []
    rest = "; the others index with their answering model" if len(own) < len(runs) else ""
    return [f"indexing model: {', '.join(own)}{rest}"]


def pr_convention_line(runs: list[Any]) -> list[str]:
    """The P/R convention (metrics.json `pr_convention`, written by the runs of a protocol that
    names it), with what its protocol says it compares with (`pr_convention_notes`)."""
    values = [r.metrics.get("pr_convention") for r in runs]
    if not any(values):
        return []
    shown = [str(v or "defined_only (not recorded)") for v in values]
    cls = next((c for r in runs if r.metrics.get("pr_convention") and (c := protocol_of(r.meta))), None)
    line = _shared(f"{title(cls)} P / R convention" if cls else "P / R convention", shown)
    notes = cls.pr_convention_notes if cls else {}
    # every run under the authors' convention, or none of them (a mix is flagged as differing)
    note = notes.get("authors") if set(values) == {"authors"} else \
        notes.get("defined_only") if "authors" not in values else None
    return [f"{line} ({note})" if note else line]


def cap_line(runs: list[Any]) -> list[str]:
    """Retrieval not tested where the cap holds the whole corpus (the runs share data, subset and
    cap, or another line says they differ: each distinct text once)."""
    return list(dict.fromkeys(t for r in runs if (t := cap_holds_corpus_text(r.meta))))


def imported_line(runs: list[Any]) -> list[str]:
    """Runs whose answers were imported: made elsewhere, under no experiment of this project's."""
    names = [r.label for r in runs if isinstance(r.meta.get("imported"), dict)]
    if not names:
        return []
    which = "every run" if len(names) == len(runs) else ", ".join(names)
    return [f"answers imported ({which}): made elsewhere with their sources' own answerer, prompt and retrieval; "
            "only the judging and scoring here are this project's (the runs' meta.json `imported` names each source)"]


def setup_lines(runs: list[Any]) -> list[str]:
    made_here = [r for r in runs if not isinstance(r.meta.get("imported"), dict)]
    return [*imported_line(runs), *experiment_lines(made_here), *index_model_line(made_here),
            *pr_convention_line(runs), *cap_line(made_here)]
