"""How well the estimate prices a run that has finished: its local model minutes as if nothing
were cached, with the output ratios measured on the run's own cached replies.

    python scripts/estimate_check.py method=seem dataset=epbench20 llm=local judge=local llm_index=local subset.n=200

The run's calls are all in the cache, so the estimate stage would price it at 0. This script
estimates it twice: once against the real cache, to read the output/max_tokens ratios the run's
replies had, then against an empty cache with those ratios. Compare the minutes it prints with
the run's wall time (docs/BUNDLES_V2.md records them), which on a 2-core machine is model time.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from memeval.harness.estimate import compose, estimate


def main(argv: list[str]) -> int:
    measured = estimate(compose(argv))
    if measured["total"]["calls"]:
        print(f"note: {measured['total']['calls']} of the run's calls are not in the cache (the run is unfinished "
              "or its config differs); their stages' ratios may be priors")
    with tempfile.TemporaryDirectory() as tmp:
        fresh = estimate(compose([*argv, f"cache_path={Path(tmp) / 'empty.sqlite'}"]), ratios=measured["output_ratios"])
    ratios = ", ".join(f"{k} {v:.3f}" for k, v in sorted(measured["output_ratios"].items()))
    print(f"{fresh['method']} on {fresh['dataset']}, {fresh['questions']} questions; ratios {ratios}")
    for stage, s in fresh["stages"].items():
        print(f"  {stage:<9} {s['calls']:>5} calls {s['local_seconds'] / 60:>8.1f} min")
    print(f"  {'total':<9} {fresh['total']['calls']:>5} calls {fresh['total']['local_seconds'] / 60:>8.1f} min "
          f"(throughput {fresh['throughput']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
