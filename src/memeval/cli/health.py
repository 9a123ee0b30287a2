"""`memeval health RUN_DIR... [--thresholds FILE] [--no-write] [--side-by-side]`: say when a run means nothing.

Model-free checks of each scored run folder (and its index folder; a run of `stages=[index]`
gets the index checks alone): the index, the contexts,
the answers and the judge (evaluation/health/), each against the thresholds of
conf/health/default.yaml (or --thresholds FILE). Writes RUN_DIR/health.json for each run and
prints one table (run, scope, check, status, value, threshold, message), or with
--side-by-side one row per check and a column per run (status and value). Exit status 1 when a
check failed, so scripts can stop on a degenerate run. A run inside a result bundle (results/NAME/
runs/...) is checked and printed but never written: its files are the bundle's, which
`bundle verify` checks against its manifest.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    from memeval.evaluation.bundle.manifest import holds_run
    from memeval.evaluation.health.table import markdown, rows, side_by_side
    from memeval.evaluation.runs.health_file import load_thresholds
    from memeval.evaluation.runs.locate import folder_problem
    from memeval.evaluation.runs.locking import FolderBusyError, FolderLock
    from memeval.harness.health import run_health, write_health

    ap = argparse.ArgumentParser(prog="memeval health", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="scored run folders")
    ap.add_argument("--thresholds", type=Path, default=None, help="a thresholds YAML (default conf/health/default.yaml)")
    ap.add_argument("--no-write", action="store_true", help="print the table only; write no health.json")
    ap.add_argument("--side-by-side", action="store_true",
                    help="one row per check, one column per run (status and value); messages left out")
    args = ap.parse_args(argv)
    thresholds = load_thresholds(args.thresholds)
    table, failed, named = [], [], []
    for run in args.runs:
        problem = folder_problem(run, "health")  # missing, a bundle, not a run folder: one line
        if problem and (run / "config.yaml").is_file() and not (run / "index.json").exists():
            problem = (f"{run} is neither a scored run folder (no metrics.json) nor an indexed one (no index.json): "
                       "rerun the same `memeval run` command to finish it (cached calls are free)")
        if problem and not ((run / "config.yaml").is_file() and (run / "index.json").exists()):
            print(f"error: {problem}", file=sys.stderr)
            return 2
        if not (run / "metrics.json").exists():
            print(f"{run.name}: index only (no metrics.json): the index checks", file=sys.stderr)
        bundled = holds_run(run)
        if bundled and not args.no_write:
            print(f"{run.name}: a bundled run: checked, health.json not written (the bundle's own is "
                  "checked by `memeval bundle verify`)", file=sys.stderr)
        try:
            if args.no_write or bundled:
                health = run_health(run, thresholds)
            else:
                with FolderLock(run, "run folder"):  # never write beside a run still writing
                    health = write_health(run, thresholds)
        except FolderBusyError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        table += rows(run.name, health)
        named.append((run.name, health))
        if health.failed:
            failed.append(f"{run.name}: {health.mark()}")
    print(side_by_side(named) if args.side_by_side else markdown(table))
    print(f"\n{len(args.runs) - len(failed)} of {len(args.runs)} runs without a failed check")
    for line in failed:
        print(f"- {line}")
    return 1 if failed else 0
