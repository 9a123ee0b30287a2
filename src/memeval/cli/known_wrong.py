"""`memeval judge-check --known-wrong`: answers written to be wrong beside the label set.

Finds the label set's file (data/, else ../shared/data with a note, else an error naming the
fix), has the label set keep and subset the answers (its family's known-wrong code), and records
the measured false-accept rates for its table header (evaluation/calibration.py).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from memeval.paths import ROOT


def known_wrong_file(given: str, data_dir: str, label_set: Any) -> Path:
    """The known-wrong file: the one given, else data/'s, else ../shared/data's (with a note)."""
    if given:
        return Path(given)
    rel = Path(label_set.known_wrong_file)  # relative to the data folder
    for root in (Path(data_dir), ROOT.parent / "shared" / "data"):
        if (root / rel).exists():
            if root != Path(data_dir):
                print(f"note: {Path(data_dir) / rel} is missing; reading {root / rel} "
                      f"(copy {root / rel.parent} into {Path(data_dir) / rel.parent}, or rerun "
                      f"`python scripts/fetch_data.py --only {label_set.name}` where the data step carries it)",
                      file=sys.stderr)
            return root / rel
    raise FileNotFoundError(f"no {rel} under {data_dir} or ../shared/data: put the {label_set.name} audit "
                            f"files in {Path(data_dir) / rel.parent} (../shared/data/SOURCES.md names "
                            "them), or give --known-wrong FILE")


def prepare(args: Any, data_dir: str, dataset: Any, label_set: Any, protocol: Any) -> tuple[Any, list, Path]:
    """The known-wrong answers kept (and the subset judged), with the judge-free results."""
    path = known_wrong_file(args.known_wrong, data_dir, label_set)
    audit = args.gold_audit or path.parent / "gold_audit.jsonl"
    if not audit.exists():
        raise FileNotFoundError(f"{audit} is missing: the known-wrong check leaves out the questions it "
                                "flags (give --gold-audit FILE)")
    known, chosen = label_set.load_known_wrong(path, audit, dataset, args.known_wrong_n, args.known_wrong_seed)
    label_set.deterministic(chosen, protocol)
    return known, chosen, path


def accuracy(numbers: dict[str, Any]) -> dict[str, Any]:
    return {name: {"accuracy": m.get("accuracy"), "n": m.get("n", m.get("n_answers"))}
            for name, m in numbers["overall"].items()}


def record(numbers: dict[str, Any], judge: Any, protocol: Any, args: Any, label_set: Any) -> str:
    """Record each fully measured configuration's false-accept rates (evaluation/calibration.py)."""
    from memeval.evaluation.calibration import record

    kw = numbers["known_wrong"]
    entries = label_set.calibration_entries(kw["false_accept"], {
        "dataset": args.dataset, "judge_model": judge.display_name,
        "judge_revision": getattr(judge, "model_revision", None),
        "judge_prompt": protocol.describe().get("judge_prompt"),
        "grounding_version": getattr(protocol, "grounding_version", None),
        "known_wrong": {"n_judged": kw["n_judged"], "n_kept": kw["n_kept"], "seed": kw["seed"]}})
    if not entries:
        return "nothing recorded: the judge failed on every known-wrong answer"
    return f"recorded in {record(entries, args.calibration)} ({len(entries)} configurations)"
