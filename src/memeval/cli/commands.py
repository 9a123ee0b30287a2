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
    audit,
    cache,
    catalog,
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

# What a command interrupted by Ctrl-C leaves behind and how to go on: cli/main.py prints it on one
# line (exit 130). `run` says its own (cli/run.py `interrupted`, naming the run folder); a command
# with no line of its own gets GENERIC.
READS = "it only reads run folders, so nothing in them changed; rerun the same command"
REPLACES = ("each file it writes in a run folder is replaced whole (written, then renamed), so none is "
            "half-written; rerun the same command to finish")
CACHED = "every model call made so far is cached; rerun the same command to continue (cached calls are free)"
REBUILDS = "its output folder may be incomplete (run folders are only read); rerun the same command to rebuild it"
GENERIC = "rerun the same command to finish; model calls already made are cached and free"


@dataclass(frozen=True)
class Command:
    name: str
    help: str  # one line, shown by `memeval --help`
    main: Callable[[list[str]], int]  # takes the arguments after the command's name
    interrupted: str = GENERIC  # Ctrl-C: what is kept and how to go on (one line)


COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("run", "run a method on a dataset (Hydra overrides, -m for sweeps; = python run.py)", run.main, CACHED),
    Command("report", "the comparison report (report.md/html, figures) from run folders", report.main, REBUILDS),
    Command("compare", "one comparison table from run folders, paired differences vs a reference",
            compare.main, READS),
    Command("rescore", "recompute metrics.json and the table from a run's artifacts (no model call)",
            rescore.main, REPLACES),
    Command("regrade", "a saved run under a changed scoring setting (a grounding version), from the cache alone",
            regrade.main, CACHED),
    Command("bundle", "result bundles: export run folders, verify one replays, import its calls",
            bundle.main, CACHED),
    Command("judge-check", "score a judge against a benchmark's hand-labelled answers (--dataset: its protocol's name)",
            judge_check.main, CACHED),
    Command("health", "model-free checks that say when a run means nothing; writes RUN_DIR/health.json",
            health.main, REPLACES),
    Command("label-check", "each credit (judge, grounding, both) against hand labels of the same answers: "
            "accuracy, kappa, false accepts and rejects", label_check.main, READS),
    Command("import-answers", "answers made elsewhere (a file, or a published answer set) become a run folder",
            import_answers.main, GENERIC),
    Command("judge-matrix", "re-judge saved runs under four criteria: score per method, Kendall tau", judge_matrix.main,
            CACHED),
    Command("cache", "the model-call cache: export, import, stats, check", cache.main,
            "an import keeps the entries it wrote and an export's file may be incomplete; rerun the same command"),
    Command("usage", "rebuild a run folder's usage.json from its usage.jsonl (after a kill)", usage.main, REPLACES),
    Command("estimate", "what a run would cost, before any paid call (Hydra overrides)", estimate.main,
            "an estimate sends no paid call and writes nothing before it ends; rerun the same command"),
    Command("ls", "what a run can be composed of: methods (with what each is), datasets, judges, llms, ...",
            catalog.ls_main),
    Command("info", "one method, dataset or judge: its config and, for a method, the parameters its class takes",
            catalog.info_main),
    Command("explore", "the results explorer: a static site of every question and method (index.html)", explore.main,
            REBUILDS),
    Command("audit", "one-off measurements of saved runs, indexes and bundles, each beside what it audits "
            "(`memeval audit` lists them)", audit.main, READS),
)}
