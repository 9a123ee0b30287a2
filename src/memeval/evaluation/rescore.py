"""Recompute a run's metrics.json and results table from its artifacts, with no model call.

    memeval rescore RUN_DIR [RUN_DIR ...] [--policy harsh] [--allow-partial]

Without --policy the run's configured protocol is used, reproducing metrics.json exactly; with
--policy the numbers go to metrics_<policy>.json and results_<policy>.md beside it. A run missing
answers or verdicts of questions it should hold (evaluation/runs/completeness.py) is refused:
rerun its `memeval run` command to finish it (free from the cache), or --allow-partial to score
what is there, marked "n of N questions" in metrics.json and the table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .runs.completeness import completeness, refusal
from .runs.folder import RunFolder
from .runs.locate import folder_problem
from .runs.locking import FolderBusyError, FolderLock
from .runs.scoring import score_run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="run folders (holding judgments.jsonl)")
    ap.add_argument("--policy", default=None, help="score under another policy (one of the protocol's side-by-side policies, e.g. lenient|harsh)")
    ap.add_argument("--allow-partial", action="store_true",
                    help="score a run missing questions anyway (metrics.json and the table say \"n of N questions\")")
    args = ap.parse_args(argv)
    for run_dir in args.runs:
        problem = folder_problem(run_dir, "rescore", need="config.yaml")
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        try:  # never rewrite the files of a run that is still writing them
            with FolderLock(run_dir, "run folder"):
                problem = folder_problem(run_dir, "rescore", need="judgments.jsonl")
                if problem:
                    print(f"error: {problem}", file=sys.stderr)
                    return 2
                complete = completeness(run_dir)
                if complete.partial and not args.allow_partial:
                    print(f"error: {refusal(run_dir, complete)}", file=sys.stderr)
                    return 2
                metrics = score_run(RunFolder(run_dir), policy=args.policy)
        except FolderBusyError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        name = f"metrics_{args.policy}.json" if args.policy else "metrics.json"
        scored = f" ({complete.describe()})" if complete.partial else ""
        print(f"{run_dir}: wrote {name}{scored}; overall = {json.dumps(metrics.get('overall'), default=str)}")
        ca = metrics.get("chronological_awareness")
        if isinstance(ca, dict):
            print(f"{run_dir}: chronological awareness = {ca.get('ca')} (latest {ca.get('latest')}, "
                  f"n={ca.get('n_latest')}; order {ca.get('order')}, n={ca.get('n_order')})")
    return 0

