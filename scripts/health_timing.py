"""Time `memeval health` on every bundled run, and the support checks' part of it.

Each bundled run folder (results/<bundle>/runs/<dataset>/<run>) is copied with its index folder
to a scratch tree (results/ is never written), then checked the way `memeval health` checks it
(harness.health.write_health, in this process: the interpreter's start-up is left out). Prints
one line per run: seconds for the whole health check, seconds of the support checks alone, and
the support checks' values (index and context unsupported_claims, speaker_swaps).

    .venv/bin/python scripts/health_timing.py [--bundles locomo-local epbench20-local ...]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from memeval.evaluation.health.run import check_run
from memeval.evaluation.health.stored import index_claims
from memeval.evaluation.health.support import support_checks
from memeval.evaluation.runs.folder import RunFolder
from memeval.evaluation.runs.health_file import load_thresholds
from memeval.evaluation.runs.upgrade import saved_dataset
from memeval.harness.health import index_view, method_class

ROOT = Path(__file__).resolve().parents[1]

BUNDLES = ("locomo-local", "epbench20-local", "longmemeval-local")
SHOWN = {("index", "unsupported_claims"), ("index", "speaker_swaps"), ("context", "unsupported_claims")}


def copy_run(run: Path, scratch: Path) -> Path:
    """The run folder and its index folder under scratch/<bundle>/..., as the bundle lays them out."""
    bundle = run.parents[2]
    dest = scratch / bundle.name / "runs" / run.parent.name / run.name
    shutil.copytree(run, dest)
    recorded = json.loads((run / "index.json").read_text()).get("index_folder") if (run / "index.json").exists() else None
    if recorded and (bundle / "indexes" / Path(recorded).name).is_dir():
        target = scratch / bundle.name / "indexes" / Path(recorded).name
        if not target.exists():
            shutil.copytree(bundle / "indexes" / Path(recorded).name, target)
    return dest


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundles", nargs="+", default=list(BUNDLES))
    args = ap.parse_args(argv)
    thresholds = load_thresholds()
    print("| bundle | run | health s | support s | index unsupported | speaker swaps | context unsupported |")
    print("|---|---|---|---|---|---|---|")
    totals: list[float] = []
    with tempfile.TemporaryDirectory(prefix="health_timing_") as tmp:
        for bundle in args.bundles:
            for run in sorted((ROOT / "results" / bundle / "runs").glob("*/*")):
                if not (run / "metrics.json").exists():
                    continue
                copy = copy_run(run, Path(tmp))
                cls = method_class(copy)
                t0 = time.perf_counter()
                view = index_view(copy, cls)
                health = check_run(copy, thresholds, view, tuple(cls.no_context_markers), None,
                                   tuple(cls.context_labels))
                RunFolder(copy).write_json("health.json", health.to_dict())
                whole = time.perf_counter() - t0
                predictions = RunFolder(copy).read_jsonl("predictions.jsonl")
                data = saved_dataset(copy)
                t1 = time.perf_counter()
                support_checks(predictions, index_claims(view), data, tuple(cls.context_labels),
                               tuple(cls.no_context_markers), thresholds)
                part = time.perf_counter() - t1
                totals.append(whole)
                cells = {(c.scope, c.name): f"{c.status} {c.value if c.value is not None else '-'}"
                         for c in health.checks if (c.scope, c.name) in SHOWN}
                print(f"| {bundle} | {run.name} | {whole:.1f} | {part:.1f} | "
                      f"{cells.get(('index', 'unsupported_claims'), '-')} | {cells.get(('index', 'speaker_swaps'), '-')} | "
                      f"{cells.get(('context', 'unsupported_claims'), '-')} |", flush=True)
    if totals:
        print(f"\n{len(totals)} runs: health {sum(totals):.1f} s in all, at most {max(totals):.1f} s per run")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
