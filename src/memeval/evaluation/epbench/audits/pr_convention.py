"""EpBench runs' overall and 0-cue P/R/F1 under both precision/recall conventions, from their
judgments alone (no model call, nothing written): what moves when a table follows the GSW
authors' convention (the paper's Table 2) instead of PROTOCOLS.md's defined-only means.

    memeval audit epbench-pr-convention results/epbench20-local/runs/epbench20/*
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memeval.evaluation.epbench.scoring import PR_CONVENTIONS
from memeval.evaluation.runs.folder import RunFolder
from memeval.evaluation.runs.scoring import load_protocol


def _fmt(x: float | None) -> str:
    return "-" if x is None or x != x else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="EpBench run folders (holding judgments.jsonl)")
    args = ap.parse_args(argv)
    print("| run | convention | overall P | overall R | overall F1 | 0-cue P | 0-cue R | 0-cue F1 |")
    print("|---|---|---|---|---|---|---|---|")
    for run_dir in args.runs:
        run = RunFolder(run_dir)
        protocol = load_protocol(run)
        scoring = getattr(protocol, "scoring", None)
        if scoring is None or not hasattr(scoring, "convention"):
            print(f"error: {run_dir} is not an EpBench run (its protocol has no P/R convention)", file=sys.stderr)
            return 2
        judgments = run.read_jsonl("judgments.jsonl")
        predictions = run.read_jsonl("predictions.jsonl")
        for convention in PR_CONVENTIONS:
            scoring.convention = convention
            m = scoring.metrics(judgments, predictions)
            o, z = m["overall"], m["buckets"].get("0", {})
            print(f"| {run_dir.name} | {convention} | {_fmt(o['precision'])} | {_fmt(o['recall'])} | "
                  f"{_fmt(o['f1'])} | {_fmt(z.get('precision'))} | {_fmt(z.get('recall'))} | {_fmt(z.get('f1'))} |")
    return 0
