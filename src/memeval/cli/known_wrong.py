"""`memeval judge-check --known-wrong`: the LoCoMo known-wrong answers beside the label set.

Finds the file (data/, else ../shared/data with a note, else an error naming the fix), keeps
and subsets the answers (evaluation/conversations/known_wrong.py), and records the measured
false-accept rates for the LoCoMo table header (evaluation/calibration.py).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from memeval.paths import ROOT


def known_wrong_file(given: str, data_dir: str) -> Path:
    """The known-wrong file: the one given, else data/'s, else ../shared/data's (with a note)."""
    from memeval.evaluation.conversations.known_wrong import KNOWN_WRONG

    if given:
        return Path(given)
    for root in (Path(data_dir), ROOT.parent / "shared" / "data"):
        if (root / KNOWN_WRONG).exists():
            if root != Path(data_dir):
                print(f"note: {Path(data_dir) / KNOWN_WRONG} is missing; reading {root / KNOWN_WRONG} "
                      f"(copy {root / KNOWN_WRONG.parent} into {Path(data_dir) / KNOWN_WRONG.parent}, or rerun "
                      "`python scripts/fetch_data.py --only locomo` where the data step carries it)", file=sys.stderr)
            return root / KNOWN_WRONG
    raise FileNotFoundError(f"no {KNOWN_WRONG} under {data_dir} or ../shared/data: put the LoCoMo audit "
                            f"files in {Path(data_dir) / KNOWN_WRONG.parent} (../shared/data/SOURCES.md names "
                            "them), or give --known-wrong FILE")


def prepare(args: Any, data_dir: str, dataset: Any, label_set: Any, protocol: Any) -> tuple[Any, list, Path]:
    """The known-wrong answers kept (and the subset judged), with the judge-free results."""
    from memeval.evaluation.conversations.known_wrong import (
        flagged_questions,
        load_known_wrong,
        subset,
    )

    path = known_wrong_file(args.known_wrong, data_dir)
    audit = args.gold_audit or path.parent / "gold_audit.jsonl"
    if not audit.exists():
        raise FileNotFoundError(f"{audit} is missing: the known-wrong check leaves out the questions it "
                                "flags (give --gold-audit FILE)")
    known = load_known_wrong(path, dataset, flagged_questions(audit))
    chosen = subset(known.cases, args.known_wrong_n, args.known_wrong_seed)
    label_set.deterministic(chosen, protocol)
    return known, chosen, path


def accuracy(numbers: dict[str, Any]) -> dict[str, Any]:
    return {name: {"accuracy": m.get("accuracy"), "n": m.get("n", m.get("n_answers"))}
            for name, m in numbers["overall"].items()}


def record(numbers: dict[str, Any], judge: Any, protocol: Any, args: Any) -> str:
    """Record each fully measured configuration's false-accept rates (evaluation/calibration.py)."""
    from memeval.evaluation.calibration import record
    from memeval.evaluation.conversations.known_wrong import calibration_entries

    kw = numbers["known_wrong"]
    entries = calibration_entries(kw["false_accept"], {
        "dataset": args.dataset, "judge_model": judge.display_name,
        "judge_revision": getattr(judge, "model_revision", None),
        "judge_prompt": protocol.describe().get("judge_prompt"),
        "grounding_version": getattr(protocol, "grounding_version", None),
        "known_wrong": {"n_judged": kw["n_judged"], "n_kept": kw["n_kept"], "seed": kw["seed"]}})
    if not entries:
        return "nothing recorded: the judge failed on every known-wrong answer"
    return f"recorded in {record(entries, args.calibration)} ({len(entries)} configurations)"
