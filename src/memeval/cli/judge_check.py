"""`memeval judge-check`: score a judge against the hand-labelled answers of one benchmark.

    memeval judge-check                                   # EpBench-20, the local judge
    memeval judge-check --dataset locomo --judge local_small
    memeval judge-check --dataset longmemeval --judge local --every 2
    memeval judge-check --judge openai_compatible --override judge.base_url=http://... judge.model=NAME
    memeval judge-check --dataset epbench --deterministic-only   # no model: the judge-free configurations
    memeval judge-check --dataset locomo --known-wrong --known-wrong-n 100   # + false-accept rates

Every number in a results table passes through the judge, so the judge itself gets a test set
(evaluation/judge_meta/). The judge and the protocol are built from the same Hydra config a run
composes (`dataset=...`, `judge=...`, then --override), so the check measures the judge version
the shipped dataset config sets (`dataset.protocol.judge_version`; --judge-version N or
--override dataset.protocol.judge_version=N measures another), and the response cache is the
run's (`cache_path`, `cache_backend`). The printed header and the JSON name that version.
The label-set logic lives with each family (its `adapters.py` over its `judge_check.py`), named by
its protocol class (`label_set`) and found through the plugin registry (cli/label_sets.py); the
last line printed is that family's deterministic accuracy.

`--known-wrong [FILE]` (LoCoMo) also judges answers written to be wrong
(evaluation/conversations/known_wrong.py) and prints each configuration's false-accept rate per
kind; with a judge, the rates are recorded for the LoCoMo table header (evaluation/calibration.py,
`--calibration FILE`, `--no-record`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from memeval.paths import ROOT

REPLAY_URL = "http://127.0.0.1:9/v1"  # a closed port: an uncached call fails at once


def parser(prog: str = "memeval judge-check") -> argparse.ArgumentParser:
    # the families' code loads only when the command runs
    from .label_sets import default_name, label_sets

    sets = label_sets()
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", choices=sorted(sets), default=default_name(sets),
                    help="which label set (and conf/dataset config): " +
                         ", ".join(f"{k} = dataset={s.config}" for k, s in sorted(sets.items())))
    ap.add_argument("--judge", default="local", help="a conf/judge/*.yaml name (default: local)")
    ap.add_argument("--override", nargs="*", action="extend", default=[],
                    help="extra Hydra overrides, e.g. judge.base_url=... dataset.protocol.judge_version=1")
    ap.add_argument("--judge-version", type=int, default=None,
                    help="measure this judge version instead of the dataset config's "
                         "(= --override dataset.protocol.judge_version=N)")
    ap.add_argument("--deterministic-only", action="store_true", help="the judge-free configurations alone")
    ap.add_argument("--labels", type=Path, default=None, help="default: the family's judge_meta label file")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--cache", default=None, help="response cache (default: the config's cache_path)")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--replay", action="store_true",
                    help="rescore from the response cache without starting a local server")
    ap.add_argument("--every", type=int, default=1, help="judge every k-th label only (a slow local judge)")
    ap.add_argument("--offset", type=int, default=0, help="with --every: start at this label (0-based)")
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    ap.add_argument("--known-wrong", nargs="?", const="", default=None, metavar="FILE",
                    help="also measure false accepts on known-wrong answers, where the label set has them "
                         "(default file: " + "; ".join(f"{k}: DATA/{s.known_wrong_file}" for k, s in sorted(sets.items())
                                                       if s.known_wrong_file) + ")")
    ap.add_argument("--known-wrong-n", type=int, default=None, metavar="N",
                    help="judge N known-wrong answers, stratified by kind (default: all kept)")
    ap.add_argument("--known-wrong-seed", type=int, default=0)
    ap.add_argument("--gold-audit", type=Path, default=None,
                    help="default: gold_audit.jsonl beside the known-wrong file")
    ap.add_argument("--calibration", type=Path, default=None,
                    help="where the measured rates are recorded (default: conf/calibration/judge_calibration.json, committed with the code)")
    ap.add_argument("--no-record", action="store_true", help="measure without recording the rates")
    return ap


def default_data_dir() -> str:
    """MEMEVAL_DATA, else data/, else ../shared/data: the first holding a benchmark file."""
    from memeval.datasets.integrity import manifest

    known = manifest()
    for cand in (os.environ.get("MEMEVAL_DATA"), ROOT / "data", ROOT.parent / "shared" / "data"):
        if cand and any((Path(cand) / rel).exists() for rel in known):
            return str(cand)
    return "data"


def compose_config(label_set: Any, judge: str, data_dir: str, cache: str | None,
                   overrides: list[str]) -> Any:
    """The config a run with `dataset=<label set's config> judge=<judge>` composes."""
    from hydra import compose, initialize_config_dir

    from memeval.harness.resolvers import register_resolvers
    from memeval.harness.schema import register_schemas

    register_resolvers()
    register_schemas()
    extra = [f"cache_path={cache}"] if cache else []
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose("config", overrides=[f"dataset={label_set.config}", f"judge={judge}",
                                            f"data_dir={data_dir}", *extra, *overrides])


def build_judge(cfg: Any, replay: bool = False) -> tuple[Any, Any]:
    """The judge ChatModel as a run builds it (the config's cache, through open_cache), and the
    local server pool it needs (or None). With `replay` the client is made with no server, a
    closed port and one attempt: cache hits only, an uncached call is a recorded failure."""
    from hydra.utils import instantiate

    from memeval.model_access.cache_store import open_cache
    from memeval.model_access.usage import UsageLedger

    cache = open_cache(cfg.cache_path, cfg.cache_backend)
    given = {"server": None, "base_url": REPLAY_URL, "max_attempts": 1} if replay else {}
    judge = instantiate(cfg.judge, _partial_=True)(cache=cache, ledger=UsageLedger(), **given)
    pool = None
    if judge.server is not None:
        from memeval.model_access.local_server import LocalServerPool

        pool = LocalServerPool()
        judge.serve_at(pool.start(judge.server))
    judge.check_ready()
    return judge, pool


def _timing(ledger: Any, wall_s: float, answers: int) -> dict[str, Any]:
    """What judging cost in time: calls made (fresh) and served from the cache, wall seconds, and
    seconds per fresh call (the figure a judge choice trades against accuracy)."""
    fresh, cached, _ = ledger.tally()
    return {"answers": answers, "fresh_calls": fresh, "cached_calls": cached, "wall_s": round(wall_s, 1),
            "seconds_per_fresh_call": round(wall_s / fresh, 3) if fresh else None}


async def _judge_then_close(label_set: Any, cases: Any, protocol: Any, dataset: Any, judge: Any,
                            concurrency: int) -> None:
    """Judge the cases, then close the judge's HTTP client inside this loop (model_access.loop_clients)."""
    try:
        await label_set.judge(cases, protocol, dataset, judge, concurrency)
    finally:
        await judge.aclose()


def main(argv: list[str] | None = None, prog: str = "memeval judge-check") -> int:
    from hydra.utils import instantiate

    from . import known_wrong
    from .label_sets import label_sets

    args = parser(prog).parse_args(argv)
    label_set = label_sets()[args.dataset]
    data_dir = args.data_dir or default_data_dir()
    cfg = compose_config(label_set, args.judge, data_dir, args.cache, args.override)
    from memeval.harness.schema import MissingModelSetting, check_model_settings

    try:  # an OpenAI-compatible judge without its model name: one line, before anything is built
        check_model_settings(cfg)
    except MissingModelSetting as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.judge_version is not None:
        if "judge_version" not in cfg.dataset.protocol:
            print(f"error: --judge-version: the {args.dataset} protocol has one judge version", file=sys.stderr)
            return 2
        cfg.dataset.protocol.judge_version = args.judge_version
    if args.known_wrong is not None and label_set.known_wrong_file is None:
        having = sorted(k for k, s in label_sets().items() if s.known_wrong_file)
        print(f"error: --known-wrong: the {args.dataset} label set has no known-wrong answers "
              f"(those that have: {', '.join(having) or 'none'})", file=sys.stderr)
        return 2
    dataset = instantiate(cfg.dataset.loader).load()
    protocol = instantiate(cfg.dataset.protocol)
    cases = label_set.load(args.labels, dataset)[args.offset::max(1, args.every)]
    label_set.deterministic(cases, protocol)
    wrong = known_wrong.prepare(args, data_dir, dataset, label_set, protocol) if args.known_wrong is not None else None
    extra = wrong[1] if wrong else []
    configs, judge_name, version, judge = list(label_set.deterministic_configs), label_set.no_judge, None, None
    if not args.deterministic_only:
        version = label_set.judge_version(protocol)
        judge, pool = build_judge(cfg, args.replay)
        judge_name = (f"{judge.display_name} (conf judge={args.judge}), judge version {version} "
                      f"(dataset={label_set.config}{label_set.prompt_note(protocol)})")
        started = time.monotonic()
        try:
            asyncio.run(_judge_then_close(label_set, cases + extra, protocol, dataset, judge, args.concurrency))
            numbers_timing = _timing(judge.ledger, time.monotonic() - started, len(cases) + len(extra))
        finally:
            judge.cache.close()
            if pool is not None:
                pool.close()
        configs = list(label_set.configs)
    text, numbers = label_set.report(cases, configs, judge_name)
    numbers["judge_version"] = version
    numbers["grounding_version"] = getattr(protocol, "grounding_version", None)
    if judge is not None:
        numbers["timing"] = numbers_timing
    if wrong:
        kw_text, numbers["known_wrong"] = label_set.known_wrong_report(
            wrong[0], extra, configs, known_wrong.accuracy(numbers), str(wrong[2]), args.known_wrong_seed)
        text += "\n\n" + kw_text
        if judge is not None and not args.no_record:
            text += f"\n{known_wrong.record(numbers, judge, protocol, args, label_set)}"
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=1, default=str))
    print(text)
    if judge is not None:
        tm = numbers["timing"]
        per = f"{tm['seconds_per_fresh_call']:.2f} s per fresh call" if tm["fresh_calls"] else "all cached"
        print(f"\njudge calls: {tm['fresh_calls']} fresh, {tm['cached_calls']} cached, {tm['wall_s']:.0f} s wall "
              f"for {tm['answers']} answers ({per}, concurrency {args.concurrency})")
    if version is not None:
        print(f"\njudge version measured: {version} (dataset={label_set.config}, judge={args.judge})")
    print(f"\n{label_set.last_line(numbers)}")
    return 0
