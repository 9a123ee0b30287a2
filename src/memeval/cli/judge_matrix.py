"""`memeval judge-matrix RUN_DIR...`: how far a comparison depends on the judging criterion.

    memeval judge-matrix results/epbench20-local/runs/epbench20/*            # the runs' own judge
    memeval judge-matrix runs/locomo/* --judge local --out OUT               # another judge config
    memeval judge-matrix runs/locomo/* --replay                              # cached calls only

Re-judges the saved answers of several runs of one dataset under four criteria
(evaluation/judge_matrix/criteria.py: strict grounded credit, per question type, a generous
topic match, model-free) and prints the score per method per criterion and Kendall's tau between
the criteria's rankings; writes OUT/judge_matrix.json, .md and .png. The judge is built as a run
builds it (cli/judge_check.py build_judge): by default from the first run's saved config (so the
strict criterion's calls are the run's own), else from conf/judge/NAME.yaml; every call goes
through the response cache, so a second matrix of the same runs makes no call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any


def parser(prog: str = "memeval judge-matrix") -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="run folders of one dataset")
    ap.add_argument("--judge", default=None, help="a conf/judge/*.yaml name (default: the runs' own judge)")
    ap.add_argument("--override", nargs="*", action="extend", default=[], help="Hydra overrides with --judge")
    ap.add_argument("--cache", default=None, help="response cache (default: the config's cache_path)")
    ap.add_argument("--data-dir", default=None, help="the data folder (default: the runs' own)")
    ap.add_argument("--criteria", nargs="*", default=None, help="a subset of the criteria (default: all)")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--every", type=int, default=1, metavar="K",
                    help="re-judge every K-th of the questions all runs answered (a slow local judge's sample; "
                         "the matrix names it)")
    ap.add_argument("--replay", action="store_true", help="cached calls only, no local server")
    ap.add_argument("--out", type=Path, default=Path("judge_matrix"), help="folder for the artifacts")
    return ap


def _judge_config(args: Any, runs: list[Path]) -> Any:
    """The config the judge is built from: --judge composed as a run would, else the first run's
    saved judge (all runs must share it)."""
    from memeval.evaluation.runs.upgrade import read_config
    from memeval.harness.config_data import as_dict

    if args.judge:
        from .judge_check import compose_config, default_data_dir
        from .label_sets import default_name, label_sets

        sets = label_sets()  # any dataset's config composes the judge; the default one's
        return compose_config(sets[default_name(sets)], args.judge, args.data_dir or default_data_dir(), args.cache,
                              args.override)
    configs = [read_config(r) for r in runs]
    judges = [as_dict(c.judge, resolve=False, what="judge") for c in configs]
    keys = {json.dumps({k: j.get(k) for k in ("model", "model_revision", "base_url")}) for j in judges}
    if len(keys) > 1:
        raise SystemExit("error: the runs were judged by different judges; choose one with --judge NAME")
    cfg = configs[0]
    if args.cache:
        cfg.cache_path = args.cache
    return cfg


def main(argv: list[str] | None = None, prog: str = "memeval judge-matrix") -> int:
    from memeval.evaluation.judge_matrix.criteria import CRITERIA
    from memeval.evaluation.judge_matrix.matrix import build, load_run, summarize
    from memeval.evaluation.judge_matrix.render import figure, table

    from .judge_check import build_judge

    args = parser(prog).parse_args(argv)
    criteria = tuple(args.criteria or CRITERIA)
    unknown = set(criteria) - set(CRITERIA)
    if unknown:
        print(f"error: unknown criteria {sorted(unknown)}; choose from {list(CRITERIA)}", file=sys.stderr)
        return 2
    runs = [load_run(r, args.data_dir) for r in args.runs]
    needs_judge = set(criteria) - {"model_free"}
    judge, pool = build_judge(_judge_config(args, args.runs), args.replay) if needs_judge else (None, None)
    try:
        ids, per_question = asyncio.run(build(runs, judge, args.concurrency, criteria, args.every))
    finally:
        if judge is not None:
            judge.cache.close()
        if pool is not None:
            pool.close()
    fresh, cached, _ = judge.ledger.tally() if judge is not None else (0, 0, 0.0)
    matrix = summarize(runs, per_question, ids, criteria, judge.display_name if judge else "none",
                       {"fresh": fresh, "cached": cached}, args.every)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "judge_matrix.json").write_text(json.dumps(matrix, indent=1) + "\n", encoding="utf-8")
    text = table(matrix)
    (args.out / "judge_matrix.md").write_text(text, encoding="utf-8")
    figure(matrix, args.out / "judge_matrix.png")
    print(text)
    print(f"written: {args.out / 'judge_matrix.json'}, .md, .png")
    return 0
