"""The score stage: metrics.json, the results table and meta, from artifacts alone.

Shared by the pipeline and `python -m evaluation.rescore`, so both produce identical files.
A run folder's config.yaml is saved resolved (RunFolder.write_config), so loading its protocol
needs no resolver; it may name a protocol class by a path from before evaluation/ had family
subpackages, which LEGACY_TARGETS maps to today's, so old run folders still rescore.
"""

from __future__ import annotations

from statistics import mean
from typing import Any

from hydra.utils import instantiate
from omegaconf import OmegaConf

from ..protocol import Protocol
from ..retrieval_diagnostics import diagnose, label_judgments, table_section
from .cap_audit import describe as describe_audit
from .cap_audit import summarize as summarize_audit
from .folder import RunFolder

# protocol `_target_`s saved in run folders before evaluation/ had family subpackages -> today's;
# harness.build.identity hashes today's back to these, so run folder names did not change
LEGACY_TARGETS = {
    "evaluation.epbench.EpBenchProtocol": "evaluation.epbench.protocol.EpBenchProtocol",
    "evaluation.locomo.LoCoMoProtocol": "evaluation.conversations.locomo.LoCoMoProtocol",
    "evaluation.longmemeval.LongMemEvalProtocol": "evaluation.conversations.longmemeval.LongMemEvalProtocol",
}


def load_protocol(run: RunFolder) -> Protocol:
    """The protocol exactly as the run was configured (from its saved config.yaml)."""
    node = OmegaConf.load(run / "config.yaml").dataset.protocol
    target = node.get("_target_")
    if target in LEGACY_TARGETS:
        node._target_ = LEGACY_TARGETS[target]
    return instantiate(node)


def score_run(run: RunFolder, protocol: Protocol | None = None, policy: str | None = None) -> dict[str, Any]:
    """Recompute metrics.json and results.md from judgments.jsonl (+ predictions, meta)."""
    protocol = protocol or load_protocol(run)
    judgments = run.read_jsonl("judgments.jsonl")
    predictions = run.read_jsonl("predictions.jsonl")
    if not judgments:
        raise FileNotFoundError(f"{run / 'judgments.jsonl'} is missing or empty: run the judge stage first")
    kwargs = {"policy": policy} if policy else {}
    metrics = protocol.metrics(judgments, predictions, **kwargs)
    meta = run.read_json("meta.json")
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
    if not policy:  # the run's own labels; another policy's numbers never rewrite its judgments
        run.write_jsonl("judgments.jsonl", label_judgments(judgments, per_question))
    metrics["provenance"] = {k: meta.get(k) for k in
                             ("method", "answer_model", "judge_model", "embedder", "data_version",
                              "subset", "context_cap", "protocol", "answer_with")}
    suffix = f"_{policy}" if policy else ""  # another policy never overwrites the run's own numbers
    metrics["presentation"] = protocol.presentation().to_dict()  # what the readers show
    run.write_json(f"metrics{suffix}.json", metrics)
    agreement = metrics.get("agreement")
    if isinstance(agreement, dict) and "disagreements" in agreement:  # listed for inspection
        run.write_jsonl(f"judge_disagreements{suffix}.jsonl", agreement["disagreements"])
    table = protocol.table(metrics, meta) + table_section(metrics["retrieval"], meta.get("method", "?"))
    run.write_text(f"results{suffix}.md", table)
    return metrics
