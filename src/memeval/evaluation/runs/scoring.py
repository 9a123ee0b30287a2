"""The score stage: metrics.json, the results table and meta, from artifacts alone.

Shared by the pipeline and `memeval rescore`, so both produce identical files.
A run folder's config.yaml is saved resolved (RunFolder.write_config), so loading its protocol
needs no resolver; an older folder is read through the upgrade module. The stage writes its own
artifacts (metrics.json, diagnostics.jsonl, results.md) and never rewrites another stage's.
"""

from __future__ import annotations

from pathlib import Path
from statistics import mean
from typing import Any

from hydra.utils import instantiate

from ..protocol import Protocol, Resampling
from ..retrieval_diagnostics import diagnose, diagnostics_rows, table_section
from .blocks import score_blocks
from .blocks import section as blocks_section
from .cap_audit import describe as describe_audit
from .cap_audit import summarize as summarize_audit
from .completeness import completeness
from .folder import RunFolder, json_text
from .upgrade import (
    RUN_FORMAT,
    artifacts_format,
    read_config,
    read_meta,
    recorded_facts,
    upgrade_metrics,
)


def load_protocol(run: RunFolder) -> Protocol:
    """The protocol exactly as the run was configured (its saved config.yaml, upgraded)."""
    return instantiate(read_config(run.root).dataset.protocol)


def read_metrics(run: RunFolder, name: str = "metrics.json", data_dir: Path | None = None) -> dict[str, Any]:
    """A run's metrics as today's score stage writes them (an older file upgraded on read; its
    statistics blocks need the benchmark data, at `data_dir` or where the run found it)."""
    metrics = run.read_json(name)
    meta = run.read_json("meta.json")
    if artifacts_format(meta) >= RUN_FORMAT:
        return upgrade_metrics(metrics, meta)  # keys added since the last format change
    if "presentation" in metrics and "statistics" in metrics:
        return upgrade_metrics(metrics, meta)  # rescored by today's code: nothing to compute, no protocol
    protocol = load_protocol(run)
    policy = name[len("metrics_"):-len(".json")] if name.startswith("metrics_") else None

    def blocks() -> dict[str, Any]:  # what the saved numbers resampled: questions, before format 2
        predictions = run.read_jsonl("predictions.jsonl")
        facts = recorded_facts(run.root, meta, {p["question_id"] for p in predictions}, data_dir)
        res = protocol.resampling(predictions)
        if res.unit != "question":
            res = Resampling("question", len({p["question_id"] for p in predictions}),
                             note=f"scored before {res.unit}-level resampling; rescore (memeval rescore) "
                                  f"for intervals over its {res.n_units} {res.unit}s")
        return score_blocks(protocol, run.read_jsonl("judgments.jsonl"), predictions, facts, policy, res)

    return upgrade_metrics(metrics, meta, protocol.presentation().to_dict(), blocks)


def saved_metrics_text(run: RunFolder, data_dir: Path | None = None) -> str:
    """metrics.json's text as today's score stage writes it: the file itself for a current
    run, the upgraded reading for an older one (what a bundle's replay is compared with)."""
    if artifacts_format(run.read_json("meta.json")) >= RUN_FORMAT:
        return (run / "metrics.json").read_text(encoding="utf-8")
    return json_text(read_metrics(run, data_dir=data_dir))


def score_run(run: RunFolder, protocol: Protocol | None = None, policy: str | None = None,
              dataset: Any = None) -> dict[str, Any]:
    """Recompute metrics.json and results.md from judgments.jsonl (+ predictions, meta). A
    partial run (completeness.py) is scored as it is, marked: metrics.json `questions_expected`
    and `questions_scored` (absent for a complete run, whose file is unchanged) and its table's
    question line "partial: n of N questions" (`memeval rescore` refuses it unless asked)."""
    protocol = protocol or load_protocol(run)
    judgments = run.read_jsonl("judgments.jsonl")
    predictions = run.read_jsonl("predictions.jsonl")
    if not judgments:
        raise FileNotFoundError(f"{run / 'judgments.jsonl'} is missing or empty: run the judge stage first")
    complete = completeness(run.root, dataset, predictions, judgments)
    if complete.partial:  # scored: the questions with both an answer and a verdict, in every block
        judgments = [j for j in judgments if j["question_id"] in complete.scored]
        predictions = [p for p in predictions if p["question_id"] in complete.scored]
    kwargs = {"policy": policy} if policy else {}
    metrics = protocol.metrics(judgments, predictions, **kwargs)
    meta = read_meta(run.root)
    if complete.partial:  # every table's question line says so
        meta["subset"] = f"{meta.get('subset')}; {complete.describe()}"
    if predictions:
        meta["mean_context_tokens"] = round(mean(p["context_tokens"] for p in predictions), 1)
        audit = summarize_audit(predictions)
        if audit is not None:
            metrics["cap_audit"] = audit
            meta["cap_audit_text"] = describe_audit(audit)
    if (run / "usage.json").exists():
        totals = run.read_json("usage.json")["totals"]
        meta["cost_usd"] = round(totals["fresh"]["cost_usd"] + totals["cached"]["cost_usd"], 4)
    per_question, metrics["retrieval"] = diagnose(protocol, judgments, predictions, meta)
    if not policy:  # the run's own labels; another policy's numbers never rewrite them
        run.write_jsonl("diagnostics.jsonl", diagnostics_rows(judgments, per_question))
    metrics["provenance"] = {k: meta.get(k) for k in
                             ("method", "answer_model", "judge_model", "embedder", "data_version",
                              "subset", "context_cap", "protocol", "answer_with")}
    suffix = f"_{policy}" if policy else ""  # another policy never overwrites the run's own numbers
    metrics["presentation"] = protocol.presentation().to_dict()  # what the readers show
    facts = recorded_facts(run.root, run.read_json("meta.json"), {p["question_id"] for p in predictions})
    metrics.update(score_blocks(protocol, judgments, predictions, facts, policy))
    metrics.update(complete.marks())  # nothing for a complete run
    run.write_json(f"metrics{suffix}.json", metrics)
    agreement = metrics.get("agreement")
    if isinstance(agreement, dict) and "disagreements" in agreement:  # listed for inspection
        run.write_jsonl(f"judge_disagreements{suffix}.jsonl", agreement["disagreements"])
    table = (protocol.table(metrics, meta) + blocks_section(metrics, protocol.presentation().label)
             + table_section(metrics["retrieval"], meta.get("method", "?")))
    run.write_text(f"results{suffix}.md", table)
    return metrics
