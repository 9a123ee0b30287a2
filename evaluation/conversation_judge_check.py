"""Judge meta-evaluation for the conversation benchmarks (LoCoMo, LongMemEval).

    python -m evaluation.judge_check --dataset locomo --judge local_small
    python -m evaluation.judge_check --dataset longmemeval --judge local --every 2
    python -m evaluation.judge_check --dataset locomo --deterministic-only

The label files (judge_meta/locomo_labels.jsonl, judge_meta/longmemeval_labels.jsonl) hold
answers written by hand for real questions, each labelled CORRECT (1) or WRONG (0) by a person;
question text and gold answers are joined from the data at run time. Every answer is judged
exactly as a run judges it (the protocol's own judge call), then scored four ways:

- raw: the judge's verdict (the papers' protocol);
- grounded: that verdict after the grounding check (conversations/grounding.py);
- grounding_only: the grounding check alone as a judge (no model): CORRECT iff grounded;
- token_f1: CORRECT iff the answer's token F1 against the gold is >= 0.5 (no model; LoCoMo's
  official per-category F1, plain token F1 on LongMemEval; abstention and preference answers
  have no gold answer to overlap, so this baseline calls them CORRECT iff they decline).

Accuracy is the share of labels a configuration reproduces; false CORRECT counts WRONG answers
it accepted. The last line printed is `deterministic (grounding only) accuracy: A`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from .conversations.judge_check import (
    CONFIGS,
    DETERMINISTIC,
    LABELS,
    load_cases,
    load_dataset,
    report,
    run_deterministic,
    run_judge,
)
from .conversations.locomo import LoCoMoProtocol
from .conversations.longmemeval import LongMemEvalProtocol
from .judge_check import _build_judge, _default_data_dir
from .protocol import Protocol


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", choices=sorted(LABELS), required=True)
    ap.add_argument("--judge", default="local", help="a conf/judge/*.yaml name (default: local)")
    ap.add_argument("--override", nargs="*", default=[], help="extra Hydra overrides, e.g. judge.base_url=...")
    ap.add_argument("--deterministic-only", action="store_true", help="the judge-free configurations alone")
    ap.add_argument("--labels", type=Path, default=None, help="default: judge_meta/<dataset>_labels.jsonl")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--cache", default=None, help="response cache (default: the config's cache_path)")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--replay", action="store_true", help="rescore from the response cache, no local server")
    ap.add_argument("--every", type=int, default=1, help="judge every k-th label only (a slow local judge)")
    ap.add_argument("--offset", type=int, default=0, help="with --every: start at this label (0-based)")
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    ap.add_argument("--judge-version", type=int, default=1,
                    help="LoCoMo: the protocol's judge_version (2 = category 5 by the decline check)")
    args = ap.parse_args(argv)
    data_dir = args.data_dir or _default_data_dir()
    dataset = load_dataset(args.dataset, data_dir)
    cases = load_cases(args.labels or LABELS[args.dataset], dataset)[args.offset::max(1, args.every)]
    run_deterministic(cases, args.dataset)
    configs = list(DETERMINISTIC)
    judge_name = "none (judge-free configurations only)"
    if not args.deterministic_only:
        protocol: Protocol = (LoCoMoProtocol(judge_version=args.judge_version) if args.dataset == "locomo"
                              else LongMemEvalProtocol())
        judge, pool = _build_judge(args.judge, args.override, data_dir, args.cache, args.replay)
        judge_name = f"{judge.display_name} (conf judge={args.judge})"
        if args.dataset == "locomo":
            judge_name += f", judge prompt {protocol.describe()['judge_prompt']}"
        try:
            asyncio.run(run_judge(cases, protocol, dataset, judge, args.concurrency))
        finally:
            judge.cache.close()
            if pool is not None:
                pool.close()
        configs = list(CONFIGS)
    text, numbers = report(cases, configs, judge_name, args.dataset)
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=1, default=str))
    print(text)
    print(f"\ndeterministic (grounding only) accuracy: {numbers['overall']['grounding_only']['accuracy']:.3f}")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
