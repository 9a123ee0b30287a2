"""What a run will cost, before any paid call: `memeval estimate [overrides]` or
`python run.py stages=[estimate] ...`.

The run's own stages execute against a dry recorder (model_access/dry.py): every prompt is built
by the real method, protocol and answer code and counted with o200k; calls already in the
model-call cache cost nothing; uncached calls are priced from the price table, output tokens
predicted as `max_tokens x ratio` where the ratio is measured on this run's cached calls of the
same stage (at least MIN_MEASURED of them) and otherwise taken from DEFAULT_RATIOS. Prompt
prefixes repeated across calls (>= 1024 tokens, OpenAI's prompt caching) are billed at the
cached-input price. The Batch API column halves the price of the stages that need no
interactivity (judging, and indexing for a method whose class sets `batch_index`) and,
conservatively, assumes no prompt-caching discount there. Nothing is sent, nothing is cached, no
file is written outside a temporary folder. The baselines (official packages in their own
environments) are estimated from the documented model of their calls that their class declares
(`cost_model`; harness/estimate_baselines.py).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.utils import get_class, instantiate
from omegaconf import DictConfig

from memeval.evaluation.protocol import questions_text
from memeval.evaluation.runs.folder import RunFolder
from memeval.methods.base import MemoryMethod, Services
from memeval.model_access.dry import CallRecord, DryRecorder
from memeval.model_access.usage import Price
from memeval.paths import CONF

from .build import Components, build
from .config_data import as_dict

# Rough GPT-4o priors (completion tokens / max_tokens), replaced by measured values when the cache
# holds enough calls of the stage: short answers; judge JSON of a few items; GSW's JSON maps.
DEFAULT_RATIOS = {"index": 0.30, "retrieve": 0.15, "answer": 0.06, "judge": 0.15}
MIN_MEASURED = 5


def _price_table(cfg: DictConfig) -> tuple[dict[str, Price], dict[str, float]]:
    table = as_dict(cfg.prices.models, resolve=True, what="prices.models")
    batch = as_dict(cfg.prices.get("batch_discount") or {}, resolve=True, what="prices.batch_discount")
    return {k: Price(**v) for k, v in table.items()}, {k: float(v) for k, v in batch.items()}


def measured_ratios(records: list[CallRecord]) -> dict[str, float]:
    """Output/max_tokens per stage from the calls already cached (real replies)."""
    acc: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in records:
        if r.cached and r.max_tokens:
            a = acc[r.stage]
            a[0] += r.output_tokens
            a[1] += r.max_tokens
            a[2] += 1
    return {s: a[0] / a[1] for s, a in acc.items() if a[2] >= MIN_MEASURED and a[1]}


@dataclass(frozen=True)
class LocalRate:
    """A local model's serial cost: tokens/s at no context, each slowed by `slowdown` per 1,000
    tokens of context before them (attention over a long context; on 2 cores a 10k-token prompt
    runs several times slower than a short one). Slowdowns 0 give the single-rate model."""

    prompt_tps: float
    generated_tps: float
    prompt_slowdown_per_ktok: float = 0.0
    generated_slowdown_per_ktok: float = 0.0

    def seconds(self, prompt_tokens: int, reused_tokens: int, output_tokens: int) -> float:
        """Fresh prompt tokens at their mean position, then the output at its mean position."""
        fresh = prompt_tokens - reused_tokens
        prompt_mid = (reused_tokens + prompt_tokens) / 2e3
        output_mid = (prompt_tokens + output_tokens / 2) / 1e3
        return (fresh / self.prompt_tps * (1 + self.prompt_slowdown_per_ktok * prompt_mid)
                + output_tokens / self.generated_tps * (1 + self.generated_slowdown_per_ktok * output_mid))


def _throughput_table(cfg: DictConfig) -> tuple[str, dict[str, LocalRate]]:
    """(when it was measured, model -> its rate) of the local models (prices.local_throughput)."""
    table = as_dict(cfg.prices.get("local_throughput") or {}, resolve=True, what="prices.local_throughput")
    rates = {m: LocalRate(**{k: float(x) for k, x in v.items()}) for m, v in (table.get("models") or {}).items()}
    return str(table.get("measured", "")), rates


def price_records(records: list[CallRecord], prices: dict[str, Price], batch: dict[str, float],
                  batch_stages: set[str], ratios: dict[str, float],
                  measured: frozenset[str] = frozenset(),
                  throughput: dict[str, LocalRate] | None = None) -> dict[str, Any]:
    """Per stage: calls (fresh/cached), tokens and USD, standard and with the Batch API, and the
    serial model seconds of its local calls (LocalRate.seconds: a prefix reused from the server's
    slot cache is not processed again). A stage's prior
    ratio is scaled by each call's `output_scale`; a `measured` one is not."""
    throughput = throughput or {}
    stages: dict[str, dict[str, Any]] = {}
    unpriced: set[str] = set()
    for r in records:
        e = stages.setdefault(r.stage, {"calls": 0, "cached_calls": 0, "prompt_tokens": 0,
                                        "prefix_cached_tokens": 0, "output_tokens": 0,
                                        "usd": 0.0, "usd_batch": 0.0, "usd_no_prefix_cache": 0.0,
                                        "local_seconds": 0.0, "output_ratio": None})
        if r.cached:
            e["cached_calls"] += 1
            continue
        scale = 1.0 if r.stage in measured else r.output_scale
        out = round(ratios.get(r.stage, 0.0) * r.max_tokens * scale) if r.max_tokens else r.output_tokens
        e["calls"] += 1
        e["prompt_tokens"] += r.prompt_tokens
        e["prefix_cached_tokens"] += r.prefix_cached_tokens
        e["output_tokens"] += out
        e["output_ratio"] = ratios.get(r.stage) if r.max_tokens else None
        if r.model in throughput:
            e["local_seconds"] += throughput[r.model].seconds(r.prompt_tokens, r.prefix_cached_tokens, out)
        p = prices.get(r.model)
        if p is None:
            unpriced.add(r.model)
            continue
        cached_rate = p.cached_input if p.cached_input is not None else p.input
        std = ((r.prompt_tokens - r.prefix_cached_tokens) * p.input + r.prefix_cached_tokens * cached_rate
               + out * p.output) / 1e6
        e["usd"] += std
        e["usd_no_prefix_cache"] += (r.prompt_tokens * p.input + out * p.output) / 1e6
        if r.stage in batch_stages and r.model in batch:
            e["usd_batch"] += (r.prompt_tokens * p.input + out * p.output) / 1e6 * (1 - batch[r.model])
        else:
            e["usd_batch"] += std
    total = {k: sum(e[k] for e in stages.values()) for k in
             ("calls", "cached_calls", "prompt_tokens", "prefix_cached_tokens", "output_tokens", "usd",
              "usd_batch", "usd_no_prefix_cache", "local_seconds")}
    return {"stages": stages, "total": total, "unpriced_models": sorted(unpriced)}


async def _dry_stages(cfg: DictConfig, c: Components, store: Path) -> None:
    from .stages import answer_stage, index_stage, judge_stage

    services = Services(llm=c.llm, embedder=c.embedder, cap=c.cap, store_root=store / "index", index_llm=c.index_llm)
    method: MemoryMethod = instantiate(c.method_cfg, _partial_=True)(services=services)
    run = RunFolder(store / "run")
    try:
        try:
            indexes = await index_stage(c, method, run)
            predictions = await answer_stage(c, method, indexes, run, cfg.concurrency.questions)
        finally:
            method.close()
        await judge_stage(c, predictions, run, cfg.concurrency.questions)
    finally:
        await c.aclose_clients()


def estimate(cfg: DictConfig, ratios: dict[str, float] | None = None) -> dict[str, Any]:
    """Dry-run the configured method on the configured dataset and price what it would send."""
    from .schema import check_model_settings

    check_model_settings(cfg)  # an OpenAI-compatible model without its name: one line, not a traceback
    recorder = DryRecorder(output_ratio={**DEFAULT_RATIOS, **(ratios or {})})
    c = build(cfg, check=False, dry=recorder)
    prices, batch = _price_table(cfg)
    cls = get_class(str(c.method_cfg._target_))
    cost_model = getattr(cls, "cost_model", None)
    note = None
    try:
        # a package in its own environment cannot be dry-run: its class's documented call model
        if cost_model is not None or getattr(cls, "env_spec", None) is not None:
            from .estimate_baselines import baseline_records, no_cost_model_note

            recorder.records.extend(baseline_records(c, cost_model))
            model_kind = f"documented call model ({cls.__name__}.cost_model)"
            if cost_model is None:
                model_kind, note = "no cost model", no_cost_model_note(cls)
        else:
            with tempfile.TemporaryDirectory(prefix="memeval-estimate-") as tmp:
                asyncio.run(_dry_stages(cfg, c, Path(tmp)))
            model_kind = "dry run of the real prompts"
    finally:
        c.cache.close()
    measured = measured_ratios(recorder.records)
    used = {**recorder.output_ratio, **measured}
    name = str(c.method_cfg.name)
    # a method whose index calls have no interactivity between units can send them as one batch
    batch_stages = {"judge"} | ({"index"} if getattr(cls, "batch_index", False) else set())
    measured_at, rates = _throughput_table(cfg)
    out = price_records(recorder.records, prices, batch, batch_stages, used, frozenset(measured), rates)
    out.update({"method": name, "dataset": c.dataset.name, "questions": len(c.questions), "subset": c.subset_label,
                "models": {"llm": c.llm.display_name, "index_llm": c.indexer.display_name,
                           "judge": c.judge.display_name, "embedder": c.embedder.display_name},
                "price_table": str(cfg.prices.version), "batch_stages": sorted(batch_stages),
                "throughput": measured_at,
                "output_ratios": used,
                "how": model_kind, **({"note": note} if note else {})})
    return out


def format_estimate(e: dict[str, Any]) -> str:
    indexer = e["models"].get("index_llm", e["models"]["llm"])
    indexing = f", indexing {indexer}" if indexer != e["models"]["llm"] else ""
    asked = questions_text(e.get("subset"), e["questions"])  # "n of N questions (how chosen)"
    lines = [f"estimate: {e['method']} on {e['dataset']}, {asked}",
             f"(llm {e['models']['llm']}{indexing}, judge {e['models']['judge']}, embedder {e['models']['embedder']}; "
             f"{e['how']}; prices {e['price_table']})",
             f"{'stage':<10}{'calls':>9}{'cached':>9}{'prompt tok':>14}{'prefix-cached':>15}"
             f"{'output tok':>13}{'USD':>11}{'USD batch':>11}{'local min':>11}"]
    for name, s in list(e["stages"].items()) + [("total", e["total"])]:
        lines.append(f"{name:<10}{s['calls']:>9}{s['cached_calls']:>9}{s['prompt_tokens']:>14,}"
                     f"{s['prefix_cached_tokens']:>15,}{s['output_tokens']:>13,}{s['usd']:>11.2f}"
                     f"{s['usd_batch']:>11.2f}{s['local_seconds'] / 60:>11.1f}")
    if e["total"]["prefix_cached_tokens"]:
        lines.append(f"(USD assumes every repeated prefix hits the provider's prompt cache; without "
                     f"that discount: {e['total']['usd_no_prefix_cache']:.2f})")
    if e["total"]["local_seconds"]:
        ratios = ", ".join(f"{k} {v:.2f}" for k, v in sorted(e.get("output_ratios", {}).items()))
        lines.append(f"(local min: serial model time at the throughput measured {e.get('throughput')}, "
                     f"output tokens = max_tokens x ratio ({ratios}); a looping local reply runs to "
                     "max_tokens: the ratio measured on cached calls of the stage says how often)")
    if e.get("note"):
        lines.append(f"({e['note']})")
    if e["unpriced_models"]:
        lines.append(f"(no price for {', '.join(e['unpriced_models'])}: counted as $0)")
    return "\n".join(lines)


def compose(overrides: list[str]) -> DictConfig:
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    from .resolvers import register_resolvers
    from .schema import register_schemas

    register_resolvers()
    register_schemas()
    with initialize_config_dir(str(CONF), version_base="1.3"):
        return hydra_compose("config", overrides=overrides)


def main(argv: list[str] | None = None) -> int:
    """`memeval estimate method=gsw,vanilla dataset=epbench200 +experiment=paper [--json F]`."""
    args = list(sys.argv[1:] if argv is None else argv)
    if {"-h", "--help"} & set(args):
        print(f"usage: memeval estimate [HYDRA OVERRIDES...] [--json FILE]\n\n{__doc__}")
        return 0
    json_out = None
    if "--json" in args:
        i = args.index("--json")
        json_out = Path(args[i + 1])
        del args[i:i + 2]
    methods = next((a.split("=", 1)[1].split(",") for a in args if a.startswith("method=")), [None])
    rest = [a for a in args if not a.startswith("method=")]
    results = []
    for m in methods:
        e = estimate(compose(rest + ([f"method={m}"] if m else [])))
        print(format_estimate(e) + "\n", flush=True)
        results.append(e)
    if len(results) > 1:
        std = sum(e["total"]["usd"] for e in results)
        bat = sum(e["total"]["usd_batch"] for e in results)
        raw = sum(e["total"]["usd_no_prefix_cache"] for e in results)
        local = sum(e["total"]["local_seconds"] for e in results) / 60
        print(f"all {len(results)} methods: USD {std:.2f} standard ({raw:.2f} without prompt caching), "
              f"USD {bat:.2f} with the Batch API" + (f"; local model time {local:.1f} min" if local else ""))
    if json_out:
        json_out.write_text(json.dumps(results, indent=1))
    return 0

