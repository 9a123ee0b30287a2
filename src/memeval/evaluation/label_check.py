"""Each way of crediting a conversation answer, against a person's labels of the same answers.

    memeval label-check RUN_DIR [RUN_DIR ...] --labels FILE [--sample random] [--out table.md]

FILE holds hand labels of (method, question) answers (`system`: the run's method name,
`question_id`, `correct` 1/0, optional `sample` and `gold_disputed`; evaluation/judge_meta/README.md).
Every judged run folder of a labelled method contributes its credits of the labelled answers: the
judge's verdict as given (`correct`: a local judge's, or the answers' own published verdicts),
the model-free grounding check alone (`grounded`), and both (`correct_grounded`, the headline's
grounded credit). For each credit the table gives n, accuracy, Cohen's kappa, the false-accept
rate (credited where the label says WRONG) and the false-reject rate (refused where it says
CORRECT): what a headline built on that credit can be trusted for. No model call.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .agreement import cohen_kappa
from .protocol import fmt
from .runs.folder import RunFolder, read_jsonl_file

Credit = Callable[[dict[str, Any]], int]
CREDITS: dict[str, Credit] = {
    "judge": lambda j: int(j["correct"]),
    "grounding alone": lambda j: int(bool(j["grounded"])),
    "judge AND grounding": lambda j: int(j["correct_grounded"]),
}


def judge_name(meta: dict[str, Any]) -> str:
    """Who gave a run's verdicts (its meta.json): the published ones, or its judge model."""
    protocol = meta.get("protocol") or {}
    if protocol.get("verdicts") == "published":
        return f"published ({meta.get('judge_model', '?')})"
    return str(meta.get("judge_model", "?"))


def matched(runs: list[Path], labels: list[dict[str, Any]]) -> dict[str, list[tuple[dict[str, Any], dict[str, Any]]]]:
    """{judge name: [(label, judgments line)]} for every labelled answer a judged run holds."""
    wanted = {(lab["system"], lab["question_id"]): lab for lab in labels}
    out: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for run in runs:
        meta = RunFolder(run).read_json("meta.json")
        for j in read_jsonl_file(run / "judgments.jsonl"):
            lab = wanted.get((meta.get("method"), j["question_id"]))
            if lab is not None and "judge_error" not in j and "correct" in j:
                out.setdefault(judge_name(meta), []).append((lab, j))
    return out


def rates(pairs: list[tuple[int, int]]) -> dict[str, Any]:
    """(label, credit) pairs -> n, accuracy, kappa, false-accept and false-reject rates."""
    n = len(pairs)
    wrong = [c for lab, c in pairs if lab == 0]
    right = [c for lab, c in pairs if lab == 1]
    kappa = cohen_kappa([lab for lab, _ in pairs], [c for _, c in pairs]) if n else math.nan
    return {"n": n, "accuracy": sum(lab == c for lab, c in pairs) / n if n else math.nan,
            "kappa": kappa, "false_accept": sum(wrong) / len(wrong) if wrong else math.nan,
            "false_reject": (len(right) - sum(right)) / len(right) if right else math.nan,
            "n_wrong": len(wrong), "n_right": len(right)}


def check(runs: list[Path], labels: list[dict[str, Any]], sample: str | None = None,
          skip_disputed: bool = False) -> list[dict[str, Any]]:
    """One row per (judge, credit): its agreement with the labels kept by `sample` / `skip_disputed`."""
    kept = [lab for lab in labels if (sample is None or lab.get("sample") == sample)
            and not (skip_disputed and lab.get("gold_disputed"))]
    rows = []
    groups = matched(runs, kept)
    if len(groups) > 1:  # every run's own judge at once: what a table of all these runs rests on
        groups = {**groups, "all runs, each its own judge": [p for found in groups.values() for p in found]}
    for judge, found in groups.items():
        for name, credit in CREDITS.items():  # grounding alone: model-free, on the answers that judge's runs hold
            pairs = [(int(lab["correct"]), credit(j)) for lab, j in found]
            rows.append({"judge": judge, "credit": name, **rates(pairs)})
    return rows


def render(rows: list[dict[str, Any]], what: str) -> str:
    head = ["judge", "credit", "n", "accuracy", "kappa", "false-accept", "false-reject"]
    lines = [f"Credits against the hand labels ({what})", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append(f"| {r['judge']} | {r['credit']} | {r['n']} | {fmt(r['accuracy'])} | {fmt(r['kappa'])} | "
                     f"{fmt(r['false_accept'])} ({r['n_wrong']} WRONG) | {fmt(r['false_reject'])} ({r['n_right']} CORRECT) |")
    lines += ["", "false-accept: share of answers labelled WRONG that the credit accepts; false-reject: share of "
              "answers labelled CORRECT that it refuses; kappa: Cohen's, chance-corrected agreement."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="memeval label-check", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="judged run folders")
    ap.add_argument("--labels", type=Path, required=True, help="hand labels (JSON Lines)")
    ap.add_argument("--sample", default=None, help="only labels of this sample (e.g. random)")
    ap.add_argument("--skip-disputed", action="store_true", help="leave out labels whose gold is disputed")
    ap.add_argument("--out", type=Path, help="also write the table (.md) and rows (.json) here")
    args = ap.parse_args(argv)
    missing = [str(r) for r in args.runs if not (r / "judgments.jsonl").exists()]
    if missing:
        print(f"error: not judged run folders (no judgments.jsonl): {', '.join(missing)}", file=sys.stderr)
        return 2
    if not args.labels.exists():
        print(f"error: {args.labels} does not exist", file=sys.stderr)
        return 2
    rows = check(args.runs, read_jsonl_file(args.labels), args.sample, args.skip_disputed)
    if not rows:
        print("error: no labelled answer is in these runs (labels' `system` must be the runs' method names)",
              file=sys.stderr)
        return 2
    what = (f"sample {args.sample}" if args.sample else "all labels") + (", disputed golds left out"
                                                                         if args.skip_disputed else "")
    text = render(rows, what)
    print(text)
    if args.out:
        args.out.with_suffix(".md").write_text(text, encoding="utf-8")
        args.out.with_suffix(".json").write_text(json.dumps(rows, indent=2, default=str) + "\n", encoding="utf-8")
    return 0

