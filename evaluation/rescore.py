"""Recompute a run's metrics.json and results table from its artifacts, with no model call.

    python -m evaluation.rescore RUN_DIR [RUN_DIR ...] [--policy harsh]

Without --policy the run's configured protocol is used, reproducing metrics.json exactly; with
--policy the numbers go to metrics_<policy>.json and results_<policy>.md beside it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .runs.folder import RunFolder
from .runs.locking import FolderBusyError, FolderLock
from .runs.scoring import score_run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="run folders (holding judgments.jsonl)")
    ap.add_argument("--policy", default=None, help="score under another policy (EpBench: lenient|harsh)")
    args = ap.parse_args(argv)
    for run_dir in args.runs:
        if not (run_dir / "config.yaml").exists():
            print(f"error: {run_dir} is not a run folder (no config.yaml)", file=sys.stderr)
            return 2
        try:  # never rewrite the files of a run that is still writing them
            with FolderLock(run_dir, "run folder"):
                metrics = score_run(RunFolder(run_dir), policy=args.policy)
        except FolderBusyError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        name = f"metrics_{args.policy}.json" if args.policy else "metrics.json"
        print(f"{run_dir}: wrote {name}; overall = {json.dumps(metrics.get('overall'), default=str)}")
        ca = metrics.get("chronological_awareness")
        if isinstance(ca, dict):
            print(f"{run_dir}: chronological awareness = {ca.get('ca')} (latest {ca.get('latest')}, "
                  f"n={ca.get('n_latest')}; order {ca.get('order')}, n={ca.get('n_order')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
