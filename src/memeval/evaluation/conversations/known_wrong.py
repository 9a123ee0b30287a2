"""Known-wrong LoCoMo answers: a judge configuration's false-accept rate.

`locomo/audit/known_wrong_answers.jsonl` (../shared/data/SOURCES.md) holds answers written to be
wrong, two per question: `specific_wrong` (a confident, specific wrong answer) and
`vague_topical` (on topic, without the gold's content). Every one a configuration accepts is a
false accept. As SOURCES.md says, questions whose gold an audit flags (`gold_audit.jsonl`:
audit a's score-corrupting rows and every audit-b row) are left out, since their "wrong" answer
may be right, and so are yes/no questions, which a vague answer can get right by direction.
The answers are judged exactly as the label set's (conversations/judge_check.py: the protocol's
own judge call, then grounding; grounding_only and token_f1 without a model), so a subset
(`subset`: stratified by kind, seeded) is cheap to run with a slow local judge.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memeval.datasets.types import Dataset

from .judge_check import Case
from .locomo import speakers_of

KNOWN_WRONG = Path("locomo") / "audit" / "known_wrong_answers.jsonl"
GOLD_AUDIT = Path("locomo") / "audit" / "gold_audit.jsonl"
KINDS = ("specific_wrong", "vague_topical")
_YES_NO_QUESTION = re.compile(
    r"^\s*(?:is|are|was|were|do|does|did|would|could|can|will|has|have|had|should|might)\b", re.I)
_YES_NO_GOLD = re.compile(r"^\W*(?:(?:most )?likely |probably |definitely )?(?:yes|no|not)\b", re.I)


_WHY = {"gold_audit": "on questions a gold audit flags", "yes_no": "on yes/no questions",
        "not_in_dataset": "on questions not in the dataset"}


@dataclass
class KnownWrong:
    """The known-wrong cases kept, and how many rows each rule left out."""

    cases: list[Case]
    n_rows: int
    left_out: dict[str, int]


def flagged_questions(path: Path) -> set[str]:
    """Question ids (`conv-N-qK`) whose gold answer an audit flags as wrong (see the docstring)."""
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        a = row.get("audit_a") or {}
        if a.get("score_corrupting") or row.get("audit_b"):
            out.add(f"{row['sample_id']}-q{int(row['qa_index'])}")
    return out


def is_yes_no(question: str, gold: str) -> bool:
    return bool(_YES_NO_QUESTION.match(question) or _YES_NO_GOLD.match(gold))


def load_known_wrong(path: Path, dataset: Dataset, flagged: Iterable[str] = ()) -> KnownWrong:
    """Join the known-wrong rows to the dataset's questions; refuse a row whose category does not
    match its question (the wrong file, or another LoCoMo version)."""
    by_id = {q.id: q for q in dataset.questions}
    flagged = set(flagged)
    left = {"gold_audit": 0, "yes_no": 0, "not_in_dataset": 0}
    cases: list[Case] = []
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    for row in rows:
        qid = f"{row['sample_id']}-q{int(row['qa_index'])}"
        q = by_id.get(qid)
        if q is None:
            left["not_in_dataset"] += 1
            continue
        if int(q.attrs["category"]) != int(row["category"]):
            raise ValueError(f"{path}: {qid} is category {q.attrs['category']} in the data, "
                             f"{row['category']} in the known-wrong file")
        if qid in flagged:
            left["gold_audit"] += 1
            continue
        if is_yes_no(q.text, q.gold[0]):
            left["yes_no"] += 1
            continue
        label = {"id": f"{qid}-{row['kind']}", "answer": str(row["answer"]), "correct": 0,
                 "category": str(row["kind"]), "reference": (row.get("reference_judge_accepts"),
                                                             row.get("reference_judge_runs"))}
        cases.append(Case(label, q, speakers=speakers_of(dataset.corpus_for(q))))
    return KnownWrong(cases, len(rows), left)


def subset(cases: list[Case], n: int | None, seed: int = 0) -> list[Case]:
    """At most `n` cases, split evenly over the kinds (a kind with fewer gives its share to the
    others), drawn with `seed`, in file order; None keeps all."""
    if n is None or n >= len(cases):
        return list(cases)
    by_kind: dict[str, list[int]] = {}
    for i, c in enumerate(cases):
        by_kind.setdefault(c.label["category"], []).append(i)
    rng = random.Random(seed)
    share, chosen = dict.fromkeys(by_kind, 0), []
    left = n
    while left > 0:  # round-robin so the kinds stay balanced
        for k in sorted(by_kind):
            if left and share[k] < len(by_kind[k]):
                share[k] += 1
                left -= 1
    for k, idx in sorted(by_kind.items()):
        chosen += rng.sample(idx, share[k])
    return [cases[i] for i in sorted(chosen)]


def false_accepts(cases: list[Case], configs: Iterable[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """configuration -> kind -> {rate, n, accepted, judge_failed}; a judge failure is no accept
    and no reject: it is left out of n and counted apart."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name in configs:
        out[name] = {}
        for kind in sorted({c.label["category"] for c in cases}):
            got = [c.results.get(name) for c in cases if c.label["category"] == kind]
            judged = [g for g in got if g is not None]
            accepted = sum(1 for g in judged if g == 1)
            out[name][kind] = {"rate": accepted / len(judged) if judged else math.nan, "n": len(judged),
                               "accepted": accepted, "judge_failed": len(got) - len(judged)}
    return out


def reference_rates(cases: list[Case]) -> dict[str, dict[str, Any]]:
    """The audit's own reference judge (gpt-4o-mini, generous prompt) on the same answers."""
    out = {}
    for kind in sorted({c.label["category"] for c in cases}):
        refs = [c.label["reference"] for c in cases if c.label["category"] == kind]
        ok = [(a, r) for a, r in refs if isinstance(a, int) and isinstance(r, int) and r > 0]
        out[kind] = {"rate": sum(a / r for a, r in ok) / len(ok) if ok else math.nan, "n": len(ok)}
    return out


def calibration_entries(rates: dict[str, dict[str, dict[str, Any]]], base: dict[str, Any]) -> list[dict[str, Any]]:
    """One calibration entry per configuration with every kind measured (evaluation/calibration.py);
    a configuration the judge failed on entirely is not recorded."""
    out = []
    for name, kinds in rates.items():
        if kinds and all(m["n"] for m in kinds.values()):
            out.append({**base, "configuration": name, "false_accept": kinds})
    return out


def rate_line(rate: float, n: int, kind: str) -> str:
    shown = "–" if rate != rate else f"{rate:.3f}"
    return f"false-accept rate: {shown} on {n} known-wrong answers (kind {kind})"


def report(known: KnownWrong, cases: list[Case], configs: list[str], accuracy: dict[str, Any],
           source: str, seed: int) -> tuple[str, dict[str, Any]]:
    """Per configuration: its label-set accuracy, then one false-accept line per kind."""
    rates = false_accepts(cases, configs)
    left = ", ".join(f"{n} {_WHY[why]}" for why, n in known.left_out.items() if n)
    lines = [f"Known-wrong answers: {source} ({known.n_rows} rows; left out: {left or 'none'}); "
             f"{len(cases)} of {len(known.cases)} judged (stratified by kind, seed {seed})", ""]
    for name in configs:
        acc = accuracy.get(name, {})
        shown = "–" if acc.get("accuracy") is None else f"{acc['accuracy']:.3f}"
        lines.append(f"{name}: accuracy {shown} on {acc.get('n', 0)} labelled answers")
        for kind, m in rates[name].items():
            failed = f"; {m['judge_failed']} judge failures left out" if m["judge_failed"] else ""
            lines.append(f"  {rate_line(m['rate'], m['n'], kind)}{failed}")
    ref = reference_rates(cases)
    lines.append("reference (the audit's gpt-4o-mini runs, generous LoCoMo prompt, same answers): "
                 + "; ".join(f"{m['rate']:.3f} ({k})" for k, m in ref.items() if m["n"]))
    numbers = {"source": source, "n_rows": known.n_rows, "left_out": known.left_out,
               "n_kept": len(known.cases), "n_judged": len(cases), "seed": seed,
               "false_accept": rates, "reference": ref}
    return "\n".join(lines), numbers
