"""Times difflib against rapidfuzz on the fuzzy phrase test of EpBench grounding, and counts the
pairs on which they decide differently.

    python scripts/bench_fuzzy.py [results/epbench20-local] [--data data] [--repeat 5]

The inputs are real: every (item, window) pair that `phrase_in` hands to `close_enough` while the
bundled runs' judgments are grounded and matched again (`matcher.checks`, as the judge stage runs
it). difflib's ratio counts the characters of Ratcliff-Obershelp matching blocks; rapidfuzz's
`fuzz.ratio` counts a longest common subsequence, never fewer, so at the same threshold it can
accept a pair difflib rejects. A switch pays only when it is faster and decides every pair alike
(scored runs must rescore byte for byte). rapidfuzz is optional: without it only difflib is timed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from memeval.evaluation.epbench import grounding
from memeval.evaluation.epbench.matcher import checks
from memeval.evaluation.epbench.universe import load_universe
from memeval.evaluation.runs.folder import read_jsonl_file

Pair = tuple[str, str]


def collect_pairs(bundle: Path, data_dir: Path) -> tuple[list[Pair], int]:
    """The pairs the fuzzy test sees while every bundled EpBench judgment is grounded again."""
    seen: list[Pair] = []
    real = grounding.close_enough

    def record(a: str, b: str) -> bool:
        seen.append((a, b))
        return real(a, b)

    grounding.close_enough = record
    lines = 0
    try:
        for run in sorted(bundle.glob("runs/*/*/")):
            book = _book(run / "config.yaml")
            universe = load_universe(data_dir, book)
            preds = {p["question_id"]: p for p in read_jsonl_file(run / "predictions.jsonl")}
            for j in read_jsonl_file(run / "judgments.jsonl"):
                p = preds.get(j["question_id"])
                if p is None or "judge_error" in j:
                    continue
                checks(p["question"], j.get("retrieval_type") or "", j["gold"], j["matching_score"],
                       j["identified_items"], p["answer"], universe)
                lines += 1
    finally:
        grounding.close_enough = real
    return seen, lines


def _book(config: Path) -> int | None:
    for line in config.read_text(encoding="utf-8").splitlines():
        if line.strip().startswith("book:"):
            return int(line.split(":", 1)[1])
    return None


def time_it(fn: Callable[[str, str], bool], pairs: list[Pair], repeat: int
            ) -> tuple[float, list[bool]]:
    """Best of `repeat` wall times over all pairs, and the decisions."""
    best = float("inf")
    out: list[bool] = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = [fn(a, b) for a, b in pairs]
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle", nargs="?", type=Path, default=Path("results/epbench20-local"))
    ap.add_argument("--data", type=Path, default=Path("data"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    pairs, lines = collect_pairs(args.bundle, args.data)
    t_all = time.perf_counter() - t0
    print(f"{lines} judgments grounded and matched again in {t_all:.1f} s: {len(pairs)} fuzzy "
          f"tests, {len(set(pairs))} distinct pairs")
    if not pairs:
        return 1
    t_dl, dl = time_it(grounding.close_enough, pairs, args.repeat)
    print(f"difflib  (real_quick, quick, ratio >= {grounding.FUZZY_RATIO}): {t_dl * 1e3:8.2f} ms, "
          f"{t_dl / len(pairs) * 1e6:6.2f} us/pair, {sum(dl)} accepted "
          f"({t_dl / t_all:.1%} of the grounding pass)")
    try:
        from rapidfuzz import fuzz
    except ImportError:
        print("rapidfuzz is not installed: nothing to compare")
        return 0
    cut = grounding.FUZZY_RATIO * 100

    def rapid(a: str, b: str) -> bool:
        return fuzz.ratio(a, b, score_cutoff=cut) >= cut

    t_rf, rf = time_it(rapid, pairs, args.repeat)
    print(f"rapidfuzz (fuzz.ratio >= {cut:g}):                {t_rf * 1e3:8.2f} ms, "
          f"{t_rf / len(pairs) * 1e6:6.2f} us/pair, {sum(rf)} accepted")
    differ = sorted({(a, b) for (a, b), x, y in zip(pairs, dl, rf, strict=True) if x != y})
    print(f"speed-up {t_dl / t_rf:.1f}x; pairs decided differently: {len(differ)} distinct")
    for a, b in differ[:10]:
        print(f"  {a!r} vs {b!r}: difflib {grounding.SequenceMatcher(None, a, b).ratio():.3f}, "
              f"rapidfuzz {fuzz.ratio(a, b) / 100:.3f}")
    print(f"time saved by a switch: {(t_dl - t_rf) * 1e3:.0f} ms of {t_all:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
