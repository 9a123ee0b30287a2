"""What the score stage needs from the dataset but cannot read from a run's artifacts.

A run records these in meta.json when it is made (harness/pipeline.py), so scoring stays a
function of the run folder: the population a question subset was drawn from (its stratum
counts, for an overall weighted by each stratum's share) and which of the run's questions a
published audit of the gold flags. Runs made before they were recorded get them from the data
through the upgrade module (evaluation/runs/upgrade.py), computed by this same function.
`cap_holds_corpus` (for how many questions the cap holds the whole corpus) is not back-filled:
a run without it shows no line, as before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from memeval.model_access.tokenizer import count_tokens

from .types import ContextCap, Dataset, Question


def population(questions: Iterable[Question], key: str) -> dict[str, Any]:
    """Stratum counts of the question set a subset is drawn from (keys as strings, sorted)."""
    counts = Counter(str(q.attrs.get(key)) for q in questions)
    return {"key": key, "n": sum(counts.values()), "counts": dict(sorted(counts.items()))}


def _evidence(q: Question) -> tuple[str, ...]:
    """What a question is answered from: its evidence turns where the dataset lists them, else its gold units."""
    ev = q.attrs.get("evidence")
    return tuple(sorted(map(str, ev))) if isinstance(ev, list | tuple) and ev else tuple(sorted(q.gold_units))


def repeated_questions(questions: Iterable[Question]) -> dict[str, str]:
    """{question id: the earlier question it repeats}: the same corpus, the same text (case and
    spacing aside) and the same evidence. Such a pair counts one question twice in a mean (LoCoMo
    conv-48 holds 11), or asks it twice with golds that contradict each other (LoCoMo conv-30's
    category-4 question whose gold is its category-5 twin's trap answer), so every method loses one."""
    first: dict[tuple[str, str, tuple[str, ...]], str] = {}
    out = {}
    for q in questions:
        key = (q.corpus_id, " ".join(q.text.lower().split()), _evidence(q))
        if key in first:
            out[q.id] = first[key]
        else:
            first[key] = q.id
    return out


def dataset_facts(dataset: Dataset, pool: list[Question] | None, run_ids: Iterable[str]) -> dict[str, Any]:
    """meta.json's `population` (None: not known, see the upgrade module), `gold_audit` (None: no
    audit of this dataset exists; flagged ids restricted to the run's questions) and `repeats`
    (the run's questions that repeat an earlier one of the dataset, with that one's id)."""
    audit = dataset.gold_audit
    ids = set(run_ids)
    return {
        "population": population(pool, dataset.strata_key) if pool is not None else None,
        "gold_audit": None if audit is None else {
            "source": audit.source, "rule": audit.rule, "available": audit.available,
            "flagged": {k: v for k, v in sorted(audit.flagged.items()) if k in ids}},
        "repeats": {k: v for k, v in sorted(repeated_questions(dataset.questions).items()) if k in ids},
    }


def cap_holds_corpus(dataset: Dataset, cap: ContextCap, questions: Iterable[Question]) -> dict[str, int]:
    """meta.json's `cap_holds_corpus`: of the run's questions, how many ask about a corpus that fits
    inside the cap whole (units, and the tokens of the units' text: the headers a method adds when
    it shows them are not counted). There a method may hand the model everything, so those
    questions measure what it keeps and how the model answers, not retrieval."""
    fits: dict[str, bool] = {}
    held = n = 0
    for q in questions:
        n += 1
        if q.corpus_id not in fits:
            units = dataset.corpora[q.corpus_id].units
            ok = cap.max_units is None or len(units) <= cap.max_units
            if ok and cap.max_tokens is not None:  # counted only where the units fit (LongMemEval S: never)
                ok = sum(count_tokens(u.text) for u in units) <= cap.max_tokens
            fits[q.corpus_id] = ok
        held += fits[q.corpus_id]
    return {"questions": held, "of": n}
