"""Every `memeval` subcommand, in one table: its name, its one-line help and the function it runs.

A new command (health, judge-matrix, explore, ...) is a thin module in cli/ with a
`main(argv: list[str]) -> int` and one more line in COMMANDS; `memeval --help` lists it.
Command modules import their implementation inside `main`, so `memeval --help` loads none of them
(tests/test_cli.py checks that it imports no Hydra, pandas or model client).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import (
    cache,
    compare,
    estimate,
    explore,
    health,
    import_answers,
    judge_check,
    judge_matrix,
    label_check,
    regrade,
    report,
    rescore,
    run,
    usage,
)
from .bundle import command as bundle


@dataclass(frozen=True)
class Command:
    name: str
    help: str  # one line, shown by `memeval --help`
    main: Callable[[list[str]], int]  # takes the arguments after the command's name


COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("run", "run a method on a dataset (Hydra overrides, -m for sweeps; = python run.py)", run.main),
    Command("report", "the comparison report (report.md/html, figures) from run folders", report.main),
    Command("compare", "one comparison table from run folders, paired differences vs a reference",
            compare.main),
    Command("rescore", "recompute metrics.json and the table from a run's artifacts (no model call)",
            rescore.main),
    Command("regrade", "a saved run under a changed scoring setting (a grounding version), from the cache alone",
            regrade.main),
    Command("bundle", "result bundles: export run folders, verify one replays, import its calls",
            bundle.main),
    Command("judge-check", "score a judge against the hand-labelled answers (epbench, locomo, longmemeval)",
            judge_check.main),
    Command("health", "model-free checks that say when a run means nothing; writes RUN_DIR/health.json",
            health.main),
    Command("label-check", "each credit (judge, grounding, both) against hand labels of the same answers: "
            "accuracy, kappa, false accepts and rejects", label_check.main),
    Command("import-answers", "answers made elsewhere (a file, or a published LoCoMo set) become a run folder",
            import_answers.main),
    Command("judge-matrix", "re-judge saved runs under four criteria: score per method, Kendall tau", judge_matrix.main),
    Command("cache", "the model-call cache: export, import, stats", cache.main),
    Command("usage", "rebuild a run folder's usage.json from its usage.jsonl (after a kill)", usage.main),
    Command("estimate", "what a run would cost, before any paid call (Hydra overrides)", estimate.main),
    Command("explore", "the results explorer: a static site of every question and method (index.html)", explore.main),
)}
