"""Create the baseline environments (GraphRAG, LightRAG, HippoRAG 2, mem0, Graphiti, cognee) and
report size and time.

    python scripts/setup_baselines.py graphrag lightrag hipporag2 mem0   # or: all
    python scripts/setup_baselines.py graphiti cognee
    python scripts/setup_baselines.py --check graphrag              # exit 1 if not set up

Each environment lives in $MEMEVAL_HOME/envs/<name>-<hash of its pins>; an existing one is reused,
so running this again costs seconds. Exits non-zero if any requested environment fails.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from memeval.methods.external import envs


def _mb(n: int) -> str:
    return f"{n / 2**20:,.0f} MB"


def main(argv: list[str] | None = None) -> int:
    specs = envs.specs()  # every registered method's environment (its class's env_spec)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="+", help=f"environments: {', '.join(specs)} or all")
    ap.add_argument("--check", action="store_true", help="only report whether each is set up")
    ap.add_argument("--json", type=Path, help="also write the report as JSON here")
    args = ap.parse_args(argv)
    names = list(specs) if args.names == ["all"] else args.names
    unknown = [n for n in names if n not in specs]
    if unknown:
        ap.error(f"unknown environment(s) {unknown}; choose from {list(specs)} or all")
    report, failed = [], []
    for name in names:
        t0 = time.perf_counter()
        if args.check:
            info = envs.env_info(specs[name])
            status = "ready" if info else "missing"
        else:
            try:
                envs.ensure_spec(specs[name])
                info, status = envs.env_info(specs[name]), "ready"
            except envs.EnvSetupError as exc:
                info, status = None, f"failed: {exc}"
        if info is None:
            failed.append(name)
        row = {"name": name, "status": status, "path": str(envs.spec_dir(specs[name])),
               "setup_seconds": info["setup_seconds"] if info else None,
               "size_bytes": info["size_bytes"] if info else None,
               "this_call_seconds": round(time.perf_counter() - t0, 1)}
        report.append(row)
        size = _mb(row["size_bytes"]) if row["size_bytes"] else "-"
        print(f"{name:10s} {status.splitlines()[0]:8s} size {size:>9s}  setup {row['setup_seconds']}s "
              f"(this call {row['this_call_seconds']}s)  {row['path']}", flush=True)
        if status.startswith("failed"):
            print(status, file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
