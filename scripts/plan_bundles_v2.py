"""The model-time plan of the v2 result bundles (issue 30), priced by the estimate stage.

Each row of PLAN is one run of the rebuild: a bundle, a method and its overrides. The script runs
`memeval.harness.estimate` on every row (a dry run of the real prompts: no call is sent, calls already in
the cache cost nothing), converts tokens to serial local minutes with the measured throughput in
conf/prices (prices.local_throughput), and prints one table per bundle and the total, so the plan
is re-priced whenever the cache holds more (import the shipped bundles' calls first:
`memeval bundle import results/NAME`).

    python scripts/plan_bundles_v2.py [--only BUNDLE] [--json FILE]
    python scripts/plan_bundles_v2.py --only epbench20-local --commands   # the runs, one command a line

The answering model, judge and indexers are the configuration chosen by measurement (docs/BUNDLES_V2.md);
the package methods' index calls come from harness/estimate_baselines.py's call model (+-50%).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from memeval.harness.estimate import MIN_MEASURED, compose, estimate

ROLES = ["llm=local", "judge=local"]  # answering and judging: the 1.5B (docs/BUNDLES_V2.md, measured)
INDEX_1_5B = ["llm_index=local"]  # the vendors need it (issue 28); the graph packages are least unhealthy with it
INDEX_0_5B = ["llm_index=local_small"]  # GSW's and SEEM's priced alternative (the 3-chapter probes chose the 1.5B)
# (label, method, overrides): a label prices one method under another configuration
METHODS = [
    ("vanilla", "vanilla", []), ("embedding_rag", "embedding_rag", []),
    ("gsw", "gsw", INDEX_1_5B), ("gsw (0.5B index)", "gsw", INDEX_0_5B),
    ("seem", "seem", INDEX_1_5B), ("seem (0.5B index)", "seem", INDEX_0_5B),
    # the graph packages: no healthy local indexer at either size (docs/BUNDLES_V2.md), so the plan
    # reuses their cached v1 0.5B index calls; the 1.5B rows price the alternative
    ("hipporag2", "hipporag2", INDEX_0_5B + ["method.max_new_tokens=1024"]),
    ("hipporag2 (1.5B index)", "hipporag2", INDEX_1_5B + ["method.max_new_tokens=1024"]),
    ("lightrag", "lightrag", INDEX_0_5B), ("lightrag (1.5B index)", "lightrag", INDEX_1_5B),
    ("graphrag", "graphrag", INDEX_0_5B), ("graphrag (1.5B index)", "graphrag", INDEX_1_5B),
    # mem0's memory replies loop at 1.5B on LoCoMo (memories again and again, in runs or in cycles,
    # ids counting, to the 1,024-token ceiling): json_items ends a reply at its first repeated
    # memory, JSON closed; json_runs missed the cycles, whose cut-off replies were lost (docs/BUNDLES_V2.md)
    ("mem0", "mem0", INDEX_1_5B + ["method.max_tokens=1024", "method.stop_repeats=json_items"]),
    # Graphiti's nested episode_indices lists count on at 1.5B (3 of EpBench's first 15 chapters lost):
    # json_counts ends them (docs/BUNDLES_V2.md)
    ("graphiti", "graphiti", INDEX_1_5B + ["method.max_tokens=2048", "method.stop_repeats=json_counts"]),
    # cognee's replies loop at 1.5B: chunk summaries inside one string, graph node lists that count
    # up. json_runs ends both; EpBench's cognee index was built under json_strings, which ends the
    # first only, before json_runs existed, and keeps it (docs/BUNDLES_V2.md)
    ("cognee", "cognee", INDEX_1_5B + ["method.max_tokens=2048", "method.stop_repeats=json_runs"]),
]
# (bundle, label) -> overrides replacing a row's: a run begun before the row changed keeps its own
# GraphRAG's text units carry their unit's title since 2026-12-06 (`unit_titles`): EpBench's run predates
# it, and LoCoMo's 0.5B index with titles failed (its one community, the prompt's own example,
# never got a valid report), so LoCoMo keeps the index of the session text alone (results/locomo-local/NOTES.md)
KEPT = {("epbench20-local", "cognee"): INDEX_1_5B + ["method.max_tokens=2048", "method.stop_repeats=json_strings"],
        ("epbench20-local", "mem0"): INDEX_1_5B + ["method.max_tokens=1024"],  # built before mem0 took json_items
        **{(b, "graphrag"): INDEX_0_5B + ["method.unit_titles=false"] for b in ("epbench20-local", "locomo-local")}}
# (bundle, method) -> a method setting for that dataset, added to the row's overrides: GSW chunks a
# conversation into 3 turns (about 24 words a sentence-chunk on LoCoMo, against EpBench's 50), so
# conversations take chunk_min_words=50 as v1's LoCoMo GSW did (conf/method/gsw.yaml): 653 Operator-
# stage calls and 218 estimated minutes on conv-30 instead of 375
PER_DATASET = {(b, "gsw"): ["method.chunk_min_words=50"] for b in ("locomo-local", "longmemeval-local")}
# (bundle, label) -> how the server serves the row, added to its overrides; none of these changes a
# run's numbers or folder (harness/build.py identity). LoCoMo's Vanilla prompt is the whole of
# conv-30 (13k tokens): four slots prefilled four copies at once, each past the client's 900 s
# timeout, and the retries began again (docs/BUNDLES_V2.md); one slot computes it once and every
# later question reuses that prefix from the server's prompt cache.
SERVING = {("locomo-local", "vanilla"): ["llm.max_concurrency=1"]}
# A bundle whose answering model needs wider slots serves every 1.5B role with them, so a run
# starts one 1.5B server (a judge or indexer left on conf/llm/local.yaml's 4 x 16k slots would
# start a second one beside it)
WIDE_SLOTS = {"longmemeval-local": ["context_window=32768", "max_concurrency=2"]}


def wide_roles(bundle: str, overrides: list[str]) -> list[str]:
    """The judge's and a 1.5B indexer's settings for `bundle`'s wide slots (none elsewhere)."""
    roles = ["judge"] + (["llm_index"] if "llm_index=local" in overrides else [])
    return [f"{r}.{s}" for r in roles for s in WIDE_SLOTS.get(bundle, [])]

BUNDLES = {
    # 200 stratified, then 40 more in cue bucket 1, where the weighted paired differences vary most
    # (docs/BUNDLES_V2.md, "The MDE target"); the 200 stay inside and replay from the cache
    "epbench20-local": ["dataset=epbench20", "subset.n=200", "subset.extra={1:40}"],
    "locomo-local": ["dataset=locomo", "dataset.loader.conversations=[conv-30]", "subset.n=null"],
    # 2 per question type (the time plan); the oracle cap (22,135 tokens) needs 32k slots: the local
    # server's 16k ones cut Vanilla's haystacks and refused Embedding RAG's contexts (docs/BUNDLES_V2.md);
    # two 17-18k prompts prefilled at once take 8 and 17 min (about 35 tokens/s at that length), past
    # the client's 900 s timeout
    "longmemeval-local": ["dataset=longmemeval_oracle", "subset.n=12", "llm.context_window=32768",
                          "llm.max_concurrency=2", "llm.timeout_s=1800"],
}
# where each v2 bundle is being built: a row whose run it already ships costs nothing more
BUNDLE_DIRS = {"epbench20-local": "epbench20-local", "locomo-local": "locomo-local-v2",
               "longmemeval-local": "longmemeval-local"}
RESULTS = Path(__file__).resolve().parents[1] / "results"


def bundled_run(bundle: str, method: str, cfg: Any, results: Path = RESULTS) -> str | None:
    """The run of `bundle`'s v2 folder made with this row's roles, or None: same method and
    dataset, the same answering, indexing and judging models, and the same question count."""
    manifest = results / BUNDLE_DIRS[bundle] / "manifest.json"
    if not manifest.is_file():
        return None
    index_model = cfg.llm_index.model if "model" in cfg.llm_index else cfg.llm.model
    extra = cfg.subset.get("extra") or {}
    n = None if cfg.subset.n is None else cfg.subset.n + sum(int(v) for v in extra.values())
    for run in json.loads(manifest.read_text())["runs"]:
        meta = json.loads((manifest.parent / run["path"] / "meta.json").read_text())
        if (meta["method"], meta["dataset"]) != (method, cfg.dataset.name):
            continue
        same_models = (meta["answer_model"], meta.get("index_model"), meta["judge_model"]) == (
            cfg.llm.model, index_model, cfg.judge.model)
        if same_models and (n is None or meta["n_questions"] == n):
            return run["path"]
    return None


def plan_rows(only: str | None = None) -> list[tuple[str, str, str, list[str]]]:
    rows = [(b, label, m, ROLES + d + KEPT.get((b, label), extra) + PER_DATASET.get((b, m), [])
             + SERVING.get((b, label), []))
            for b, d in BUNDLES.items() if only in (None, b) for label, m, extra in METHODS]
    return [(b, label, m, o + wide_roles(b, o)) for b, label, m, o in rows]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=sorted(BUNDLES))
    ap.add_argument("--json", type=Path)
    ap.add_argument("--commands", action="store_true",
                    help="print the run.py command of each chosen row (no estimate): a queue for a shell")
    args = ap.parse_args(argv)
    if args.commands:
        for bundle, label, method, overrides in plan_rows(args.only):
            if "(" not in label:  # the plan's choice; a parenthesised label prices an alternative
                print(f"python run.py method={method} " + " ".join(f"'{o}'" if "[" in o or "{" in o else o for o in overrides)
                      + f"  # {bundle}")
        return 0
    rows, total = [], 0.0
    judge_ratio: dict[str, float] = {}  # bundle -> the judge's output ratio measured on a finished run
    remaining = 0.0  # the plan's own rows (no parenthesised alternative) that no bundle ships yet
    for bundle, label, method, overrides in plan_rows(args.only):
        cfg = compose([f"method={method}", *overrides])
        done = bundled_run(bundle, method, cfg)
        if done:
            rows.append({"bundle": bundle, "label": label, "method": method, "bundled": done})
            print(f"{bundle:<20}{label:<20} bundled: results/{BUNDLE_DIRS[bundle]}/{done}", flush=True)
            if bundle not in judge_ratio:  # its cached judge calls still measure the judge's output ratio
                e = estimate(cfg)
                if e["stages"].get("judge", {}).get("cached_calls", 0) >= MIN_MEASURED:
                    judge_ratio[bundle] = e["output_ratios"]["judge"]
            continue
        try:
            # one judge and one protocol per bundle: a method not run yet is judged like one that was
            e = estimate(cfg, ratios={"judge": judge_ratio[bundle]} if bundle in judge_ratio else None)
        except Exception as exc:  # a row that cannot be priced is named, never silently dropped
            print(f"{bundle:<20}{label:<20} cannot be estimated: {type(exc).__name__}: {exc}", flush=True)
            rows.append({"bundle": bundle, "label": label, "method": method, "error": str(exc)})
            continue
        if e["stages"].get("judge", {}).get("cached_calls", 0) >= MIN_MEASURED:
            judge_ratio.setdefault(bundle, e["output_ratios"]["judge"])
        minutes = {s: v["local_seconds"] / 60 for s, v in e["stages"].items()}
        row = {"bundle": bundle, "label": label, "method": method, "overrides": overrides, "questions": e["questions"],
               "calls": e["total"]["calls"], "cached": e["total"]["cached_calls"], "minutes": minutes,
               "total_minutes": e["total"]["local_seconds"] / 60, "how": e["how"]}
        rows.append(row)
        total += row["total_minutes"]
        if "(" not in label:
            remaining += row["total_minutes"]
        stages = ", ".join(f"{s} {v:.0f}" for s, v in minutes.items() if v >= 0.5)
        print(f"{bundle:<20}{label:<20}{row['questions']:>5} q {row['calls']:>6} calls ({row['cached']} cached)"
              f" {row['total_minutes']:>7.0f} min  [{stages}]", flush=True)
    print(f"total of every row not yet bundled: {total:.0f} min = {total / 60:.1f} h of serial local model time "
          "(alternative rows included)")
    print(f"the plan's own rows not yet bundled: {remaining:.0f} min = {remaining / 60:.1f} h")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
