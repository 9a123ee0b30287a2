"""Where more questions shrink a paired table's weighted minimum detectable difference most.

For each run against the reference, the population-weighted paired difference has variance
sum_b w_b^2 s_b^2 / n_b over the strata b (EpBench's cue buckets): w_b the population share, s_b^2
the variance of the per-question differences in b, n_b the questions there. The script prints the
weighted MDE (80% power, two-sided 0.05) now and after each proposed top-up, so the questions go
where they buy the most (`subset.extra`). The normal approximation; the paired table's bootstrap
prints within a few thousandths of it.

    python scripts/project_mde.py RUN... --reference VANILLA_RUN [--add 1:40 --add 0:20,1:20,2:20]
"""

from __future__ import annotations

import argparse
import math
import statistics
from pathlib import Path

from memeval.evaluation.runs.paired import ALPHA, POWER
from memeval.evaluation.runs.scored import Run, load_runs
from memeval.evaluation.stats import min_detectable_difference


def per_stratum_differences(run: Run, reference: Run) -> tuple[dict[str, list[float]], dict[str, float]]:
    """stratum -> the run's per-question differences from the reference, and the population weights."""
    block = reference.metrics.get("stratified") or {}
    if not block.get("weights"):
        raise SystemExit(f"{reference.path}: not a stratified subset (metrics.json has no `stratified` "
                         "weights), so there is no weighted difference to project")
    strata = {p["question_id"]: str(p.get(block["key"])) for p in reference.predictions}
    mine, ref = run.headline_scores, reference.headline_scores
    out: dict[str, list[float]] = {}
    for q in sorted(set(mine) & set(ref) & set(strata)):
        out.setdefault(strata[q], []).append(mine[q] - ref[q])
    return out, block["weights"]


def projected_mde(diffs: dict[str, list[float]], weights: dict[str, float], add: dict[str, int]) -> float:
    var = sum(weights[b] ** 2 * statistics.variance(d) / (len(d) + add.get(b, 0))
              for b, d in diffs.items() if len(d) > 1)
    return min_detectable_difference(math.sqrt(var), ALPHA, POWER)


def parse_add(text: str) -> dict[str, int]:
    """'1:40' or '0:20,1:20' -> {stratum: count}."""
    try:
        return {k.strip(): int(v) for k, v in (part.split(":") for part in text.split(","))}
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--add wants stratum:count[,stratum:count], not {text!r}") from exc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--reference", type=Path, required=True)
    ap.add_argument("--add", type=parse_add, action="append", default=[],
                    help="a top-up to price, stratum:count[,stratum:count] (repeatable)")
    args = ap.parse_args(argv)
    reference, *runs = load_runs([args.reference, *[r for r in args.runs if r.resolve() != args.reference.resolve()]])
    plans = [{}, *args.add]
    names = ["now"] + ["+" + ",".join(f"{v} in {k}" for k, v in a.items()) for a in args.add]
    width = max(10, *map(len, names)) + 2
    print(f"{'run':<16}{'n by stratum':<28}" + "".join(f"{n:>{width}}" for n in names))
    for run in runs:
        diffs, weights = per_stratum_differences(run, reference)
        counts = ",".join(f"{b}:{len(d)}" for b, d in sorted(diffs.items()))
        print(f"{run.label or run.method:<16}{counts:<28}"
              + "".join(f"{projected_mde(diffs, weights, a):>{width}.3f}" for a in plans))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
