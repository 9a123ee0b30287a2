"""The pipeline stages. Each reads and writes its own artifact in the run folder."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from memeval.datasets.types import Question
from memeval.evaluation.retrieval_diagnostics import unit_token_attribution
from memeval.evaluation.runs.folder import JsonlAppender, RunFolder, config_hash
from memeval.evaluation.runs.index_usage import record_session
from memeval.evaluation.runs.upgrade import index_identity_view
from memeval.methods.base import MemoryMethod
from memeval.model_access.tokenizer import count_tokens
from memeval.model_access.usage import collect_calls, stage, summarize_calls

from .build import Components
from .plugin import outside_core_code
from .progress import StageProgress
from .provenance import CapAudit


async def index_stage(c: Components, method: MemoryMethod, run: RunFolder) -> dict[str, Any]:
    """Index every corpus the selected questions use; returns {corpus_id: index object}."""
    corpus_ids = list(dict.fromkeys(q.corpus_id for q in c.questions))
    indexes: dict[str, Any] = {}
    report = []
    with stage("index"), StageProgress("index", len(corpus_ids), c.ledger, unit="corpus") as bar:
        for cid in corpus_ids:
            t0 = time.perf_counter()
            with collect_calls() as calls:
                indexes[cid] = await method.build_index(c.dataset.corpora[cid])
            # the index folder's own usage record: what the index took, for runs that reuse it
            record_session(method.services.store_root, cid, calls, time.strftime("%Y-%m-%dT%H:%M:%S%z"))
            entry = {"corpus_id": cid, "units": len(c.dataset.corpora[cid].units),
                     "seconds": round(time.perf_counter() - t0, 3)}
            stats = getattr(indexes[cid], "stats", None)  # a method's own index summary, when it has one
            if isinstance(stats, dict) and stats:
                entry["stats"] = stats
            info = getattr(indexes[cid], "info", None)  # e.g. a baseline package's own report
            if isinstance(info, dict):
                entry["info"] = info
            report.append(entry)
            bar.advance()
    run.write_json("index.json", {"method": method.name, "params": method.params(), "corpora": report,
                                  "index_folder": str(method.services.store_root)})
    return indexes


async def answer_stage(c: Components, method: MemoryMethod, indexes: dict[str, Any],
                       run: RunFolder, concurrency: int) -> list[dict[str, Any]]:
    """Retrieve, then answer with the shared model; one predictions line per question."""
    path = run / "predictions.jsonl"
    path.unlink(missing_ok=True)
    out = JsonlAppender(path)
    sem = asyncio.Semaphore(concurrency)
    rows: dict[str, dict[str, Any]] = {}
    audit = CapAudit()

    async def one(q: Question) -> None:
        async with sem:
            with collect_calls() as calls:
                with stage("retrieve"):
                    r = await method.retrieve(indexes[q.corpus_id], q)
                ctx_tokens = count_tokens(r.context_text)
                _check_cap(c, method, q, r.units, ctx_tokens)
                with stage("answer"):
                    native = await method.answer(indexes[q.corpus_id], q, r)
                    if native is None:  # the default: one shared prompt and model for every method
                        text = (await c.llm.complete(c.protocol.answer_messages(q, r.context_text))).text
                    else:
                        text = native.text
            row = {**q.record(), "answer": text, "context_text": r.context_text,
                   "context_tokens": ctx_tokens, "context_chapters": r.units,
                   "context_unit_tokens": unit_token_attribution(r.context_text, r.units, c.dataset.corpus_for(q)),
                   "usage": summarize_calls(calls), "retrieval": r.extras,
                   "answered_by": "shared" if native is None else "method"}
            if native is not None:
                row["native_answer"] = native.extras
            if not method.exempt_from_cap:  # the harness's own provenance check (harness/provenance.py)
                row["cap_audit"] = audit.check(c.dataset.corpus_for(q), r.context_text, r.units, r.extras,
                                               ctx_tokens)
            rows[q.id] = row
            out.add(row)
            bar.advance()

    try:
        with StageProgress("answer", len(c.questions), c.ledger) as bar:
            # The first question alone, then the rest at once: answers that share a long prefix
            # (Vanilla's whole book) then find it in the server's prompt cache, instead of every
            # slot computing it cold at the same moment (on 2 CPU cores: 11 of Vanilla's 17
            # LoCoMo minutes). The same requests either way.
            if c.questions:
                await one(c.questions[0])
            async with asyncio.TaskGroup() as tg:
                for q in c.questions[1:]:
                    tg.create_task(one(q))
    finally:
        out.close()
    ordered = [rows[q.id] for q in c.questions if q.id in rows]
    run.write_jsonl("predictions.jsonl", ordered)  # final file in dataset order
    return ordered


def _check_cap(c: Components, method: MemoryMethod, q: Question, units: list[str], tokens: int) -> None:
    """The shared constraint is enforced here, once, for every method but Vanilla."""
    if method.exempt_from_cap:
        return
    if c.cap.max_units is not None and len(set(units)) > c.cap.max_units:
        raise RuntimeError(f"{method.name} put {len(set(units))} units in the context of question "
                           f"{q.id}, over the context cap of {c.cap.max_units}: the method must respect the cap.")
    if c.cap.max_tokens is not None and tokens > c.cap.max_tokens:
        raise RuntimeError(f"{method.name} put {tokens} tokens in the context of question {q.id}, "
                           f"over the context cap of {c.cap.max_tokens} tokens.")


async def judge_stage(c: Components, predictions: list[dict[str, Any]], run: RunFolder,
                      concurrency: int) -> list[dict[str, Any]]:
    path = run / "judgments.jsonl"
    path.unlink(missing_ok=True)
    out = JsonlAppender(path)
    by_id = {q.id: q for q in c.dataset.questions}
    sem = asyncio.Semaphore(concurrency)
    rows: dict[str, dict[str, Any]] = {}

    async def one(p: dict[str, Any]) -> None:
        async with sem:
            with stage("judge"):
                line = await c.protocol.judge(by_id[p["question_id"]], p, c.dataset, c.judge)
            # whether the verdict came from the cache belongs to this invocation (usage.jsonl has
            # it), not to the judgment: a resumed run's judgments equal an uninterrupted run's
            line.pop("judge_cached", None)
            rows[p["question_id"]] = line
            out.add(line)
            bar.advance()

    try:
        with StageProgress("judge", len(predictions), c.ledger) as bar:
            async with asyncio.TaskGroup() as tg:
                for p in predictions:
                    tg.create_task(one(p))
    finally:
        out.close()
    ordered = [rows[p["question_id"]] for p in predictions if p["question_id"] in rows]
    run.write_jsonl("judgments.jsonl", ordered)
    return ordered


def index_store_root(c: Components, method_params: dict[str, Any]) -> Any:
    """Index folders are shared by runs whose index-defining settings agree."""
    params = index_identity_view(str(c.method_cfg.get("_target_")), method_params)
    ident = {"method": c.method_cfg.name, "params": params,
             "indexer": [c.indexer.model, c.indexer.model_revision],
             "embedder": [c.embedder.model, c.embedder.model_revision]}
    if c.index_units is not None:  # a cut corpus is another index (absent when uncut: old names hold)
        ident["index_units"] = c.index_units
    code = outside_core_code(str(c.method_cfg.get("_target_")))
    if code is not None:  # an edited out-of-tree plugin builds its own index (core methods: absent)
        ident["code"] = code
    return c.index_root / f"{c.method_cfg.name}-{config_hash(ident)}"
