"""Score judge configurations against hand-labelled answers (the judge meta-evaluation set).

    python -m evaluation.judge_check                         # the local judge (conf/judge/local.yaml)
    python -m evaluation.judge_check --judge local_small
    python -m evaluation.judge_check --judge openai_compatible --override judge.base_url=http://...
    python -m evaluation.judge_check --deterministic-only    # no model: the matcher alone
    python -m evaluation.judge_check --dataset locomo        # LoCoMo / LongMemEval: conversations/judge_check.py

Every number in a results table passes through the judge, so the judge itself gets a test set:
answers written by hand for real EpBench questions (correct, partial, refusal, hallucinated list,
over-long list, paraphrase, other date formats), each with the right credit per gold item. The
label file holds question ids, answers and credits only; question text and gold items are
joined from the data at run time. Configurations: raw (the official one-pass judge), grounded
(its credit after the grounding check), two_pass (+ grounded) and the deterministic matcher.
Accuracy is the share of labelled gold-item credits (0 / 0.5 / 1) a configuration reproduces
exactly. The last line printed is `deterministic matcher accuracy: A`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from datasets.epbench import EpBenchLoader

from .epbench.judge_check import CONFIGS, LABELS, load_cases, report, run_judge, run_matcher
from .epbench.universe import load_universe

ROOT = Path(__file__).resolve().parents[1]


def _build_judge(name: str, overrides: list[str], data_dir: str, cache_path: str | None,
                 replay: bool = False) -> tuple[Any, Any]:
    """The judge ChatModel exactly as a run builds it, and the server pool it needs (or None)."""
    from hydra import compose, initialize_config_dir
    from hydra.utils import instantiate

    from harness.resolvers import register_resolvers
    from model_access.cache import ResponseCache
    from model_access.usage import UsageLedger

    register_resolvers()
    try:  # the run schema, where the harness defines one (conf/config.yaml lists it)
        from harness.schema import register_schemas

        register_schemas()
    except ImportError:
        pass
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[f"judge={name}", f"data_dir={data_dir}", *overrides])
    cache = ResponseCache(cache_path or cfg.cache_path)
    # replay: cache hits only; an uncached call meets a closed port and is recorded as a failure
    offline = {"server": None, "base_url": "http://127.0.0.1:9/v1", "max_attempts": 1} if replay else {}
    judge = instantiate(cfg.judge, _partial_=True)(cache=cache, ledger=UsageLedger(), **offline)
    pool = None
    if judge.server is not None:
        from model_access.local_server import LocalServerPool

        pool = LocalServerPool()
        judge.serve_at(pool.start(judge.server))
    judge.check_ready()
    return judge, pool


def _default_data_dir() -> str:
    import os

    for cand in (os.environ.get("MEMEVAL_DATA"), ROOT / "data", ROOT.parent / "shared" / "data"):
        if cand and (Path(cand) / "epbench").exists():
            return str(cand)
    return "data"


def main(argv: list[str] | None = None) -> int:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--dataset", default="epbench")
    if pre.parse_known_args(argv)[0].dataset != "epbench":  # the conversation label sets
        from .conversation_judge_check import main as conversation_main

        return conversation_main(argv)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", choices=("epbench", "locomo", "longmemeval"), default="epbench",
                    help="which label set: EpBench-20 (this module) or a conversation benchmark")
    ap.add_argument("--judge", default="local", help="a conf/judge/*.yaml name (default: local)")
    ap.add_argument("--override", nargs="*", default=[], help="extra Hydra overrides, e.g. judge.base_url=...")
    ap.add_argument("--deterministic-only", action="store_true", help="score the matcher alone (no model)")
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--cache", default=None, help="response cache (default: the config's cache_path)")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--replay", action="store_true",
                    help="rescore from the response cache without starting a local server")
    ap.add_argument("--every", type=int, default=1, help="judge every k-th label only (a slow local judge)")
    ap.add_argument("--offset", type=int, default=0, help="with --every: start at this label (0-based)")
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = ap.parse_args(argv)
    data_dir = args.data_dir or _default_data_dir()
    dataset = EpBenchLoader(20, data_dir).load()
    universe = load_universe(data_dir, 20)
    cases = load_cases(args.labels, dataset)[args.offset::max(1, args.every)]
    run_matcher(cases, universe)
    configs = ["deterministic"]
    judge_name = "none (deterministic matcher only)"
    if not args.deterministic_only:
        judge, pool = _build_judge(args.judge, args.override, data_dir, args.cache, args.replay)
        judge_name = f"{judge.display_name} (conf judge={args.judge})"
        try:
            asyncio.run(run_judge(cases, judge, universe, args.concurrency))
        finally:
            judge.cache.close()
            if pool is not None:
                pool.close()
        configs = list(CONFIGS)
    text, numbers = report(cases, configs, judge_name)
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=1, default=str))
    print(text)
    print(f"\ndeterministic matcher accuracy: {numbers['overall']['deterministic']['accuracy']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
