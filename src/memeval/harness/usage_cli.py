"""`memeval usage RUN_DIR`: usage.json rebuilt from usage.jsonl, e.g. after a kill.

A killed run never reaches the end where usage.json is written, but every call it made is in
usage.jsonl (appended as each call completes); this rebuilds usage.json from it and prints what
the run folder has cost across all its invocations, killed ones included.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from omegaconf import OmegaConf

from memeval.evaluation.runs.folder import RunFolder
from memeval.model_access.usage import Price, usage_from_journal

from .config_data import as_dict


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("run_dir", type=Path)
    a = ap.parse_args(argv)
    run = RunFolder(a.run_dir)
    if not run.has("usage.jsonl"):
        print(f"error: {run / 'usage.jsonl'} does not exist (runs from before the usage journal "
              "have only usage.json)", file=sys.stderr)
        return 2
    cfg = OmegaConf.load(run / "config.yaml") if (run / "config.yaml").exists() else None
    version = str(cfg.prices.version) if cfg is not None else "unversioned"
    table = as_dict(cfg.prices.models, resolve=True, what="prices.models") if cfg is not None else None
    prices = {name: Price(**spec) for name, spec in table.items()} if table is not None else None
    usage = usage_from_journal(run / "usage.jsonl", price_table_version=version, prices=prices)
    run.write_json("usage.json", usage)
    everything = usage["all_invocations"]
    fresh = everything["totals"]["fresh"]
    print(f"{run.root}: {everything['invocations']} invocation(s), {len(everything['interrupted'])} "
          f"interrupted before the last; paid in all: {fresh['calls']} calls, {fresh['prompt_tokens']} "
          f"prompt + {fresh['completion_tokens']} completion tokens, ${fresh['cost_usd']:.4f}")
    return 0

