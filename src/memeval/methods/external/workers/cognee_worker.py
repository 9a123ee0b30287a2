"""cognee (1.6.5) worker: sessions added and cognified one at a time, in order, into cognee's own
embedded stores (SQLite, LanceDB, the Ladybug graph) under the index folder; then the package's
default search (HYBRID_COMPLETION, context only) per question.

Runs inside the cognee environment (standard library + that env only). The LLM is cognee's
"custom" provider (litellm, OpenAI-compatible) and the embedder its "openai_compatible" engine,
both pointed at the framework's proxy; telemetry is off (TELEMETRY_DISABLED=1) and the egress
guard refuses anything else. Each session is a file named by its unit id whose first line is
its heading and date, so every chunk names its session (`document_name`) and cognee's temporal
hints have the session's date to resolve "last week" against.

Context cap: the retriever's chunk lane (verbatim passages) is the part that can be traced to
sessions; its final cut (HybridCandidates.finalize) is wrapped so that chunks from sessions
beyond the first `max_units` in rank order are dropped before cognee formats the context. The
entity and fact sections are graph-derived and reported as uncapped (the harness audits any
verbatim text in them).
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import importlib
import json
import os
import random
import time
import uuid
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from _serve import KEY, capped_units, chapters_in_order, embedding_dimension, log, serve

DATASET = "memeval"
STATE: dict[str, Any] = {"max_units": None, "dropped": [], "before": []}
TALLY: Counter[str] = Counter()
NAMES: list[str] = []  # entity names of the session being cognified
# the structured call this task is in: its attempts and accepted replies (None outside one)
_CALL: contextvars.ContextVar[Counter[str] | None] = contextvars.ContextVar("structured_call", default=None)


_UUIDS = random.Random(0)


def _seeded_uuid4() -> uuid.UUID:
    return uuid.UUID(int=_UUIDS.getrandbits(128), version=4)


def reseed_uuids(*parts: str) -> None:
    """uuid4s drawn from a generator seeded per session, not from os.urandom.

    cognee names data by uuid5(content + the default user's id), and that user is created with
    a random uuid4; so a rebuild of the same corpus gave every document and chunk new ids, and
    equal scores broke in another order: a rebuild from the cache changed 3 of 10 LoCoMo conv-43
    contexts (an entity's edges in another order, another session's passage at the cap), each a
    new answer call (measured with the scripted server).
    """
    _UUIDS.seed(hashlib.sha256("\x00".join(parts).encode()).digest())


uuid.uuid4 = _seeded_uuid4  # before cognee is imported: its modules bind uuid4 by name


def _configure(p: dict[str, Any]) -> dict[str, Any]:
    """cognee reads its settings from the environment (pydantic-settings): set every one that
    matters here, before cognee is imported, so nothing falls back to OpenAI or a local model."""
    s, llm, emb = p["settings"], p["llm"], p["embedding"]
    dim = embedding_dimension(emb["base_url"], emb["model"])
    root = Path(p["index_dir"])
    env = {
        "TELEMETRY_DISABLED": "1",
        "LLM_PROVIDER": "custom", "LLM_MODEL": f"openai/{llm['model']}", "LLM_ENDPOINT": llm["base_url"],
        "LLM_API_KEY": KEY,
        "EMBEDDING_PROVIDER": "openai_compatible", "EMBEDDING_MODEL": emb["model"],
        "EMBEDDING_ENDPOINT": emb["base_url"], "EMBEDDING_API_KEY": KEY, "EMBEDDING_DIMENSIONS": str(dim),
        "ENABLE_BACKEND_ACCESS_CONTROL": "false",  # one corpus, one user: no per-user databases
        "SYSTEM_ROOT_DIRECTORY": str(root / "system"), "DATA_ROOT_DIRECTORY": str(root / "data"),
        "COGNEE_LOG_FILE": "false", "LOG_LEVEL": s.get("log_level", "WARNING"),
    }
    if s.get("max_tokens") is not None:  # cognee sends no max_tokens unless LLM_ARGS carries one
        env["LLM_ARGS"] = json.dumps({"max_tokens": int(s["max_tokens"])})
    os.environ.update(env)
    return {"embedding_dim": dim, "llm_model": env["LLM_MODEL"], "llm_args": env.get("LLM_ARGS")}


def _install_counters() -> None:
    """Count model calls per session: litellm attempts, structured calls, replies accepted by
    cognee's response model (and the nodes/edges they hold), structured calls that failed."""
    import litellm
    from cognee.infrastructure.llm.LLMGateway import LLMGateway as gateway
    from cognee.infrastructure.llm.structured_output_framework.litellm_native import native_adapter

    completion = litellm.acompletion

    @functools.wraps(completion)
    async def counted_completion(*args: Any, **kwargs: Any) -> Any:
        TALLY["chat_attempts"] += 1
        call = _CALL.get()
        if call is not None:
            call["attempts"] += 1
        t0 = time.perf_counter()
        try:
            return await completion(*args, **kwargs)
        finally:
            TALLY["chat_ms"] += round(1000 * (time.perf_counter() - t0))

    litellm.acompletion = counted_completion
    attach = native_adapter._attach_raw_response

    @functools.wraps(attach)
    def accepted(model: Any, response: Any) -> Any:
        TALLY["structured_ok"] += 1
        call = _CALL.get()
        if call is not None:
            call["ok"] += 1
        kind = type(model).__name__
        if kind == "KnowledgeGraph":
            TALLY["graph_nodes"] += len(getattr(model, "nodes", []) or [])
            TALLY["graph_edges"] += len(getattr(model, "edges", []) or [])
            NAMES.extend(str(getattr(n, "name", "") or getattr(n, "id", "")) for n in model.nodes or [])
        elif kind == "SummarizedContent":
            TALLY["summaries"] += 1
        return attach(model, response)

    native_adapter._attach_raw_response = accepted

    structured = gateway.acreate_structured_output

    async def counted_structured(*args: Any, **kwargs: Any) -> Any:
        TALLY["structured_calls"] += 1
        call: Counter[str] = Counter()
        token = _CALL.set(call)  # this task's context: concurrent calls keep their own
        try:
            out = await structured(*args, **kwargs)
        except Exception as exc:
            TALLY["chat_failed"] += 1
            TALLY[f"failed:{type(exc).__name__}"] += 1
            raise
        finally:
            _CALL.reset(token)
        if call["attempts"] > max(call["ok"], 1):  # a reply was rejected before one was accepted
            TALLY["schema_invalid"] += 1
        return out

    gateway.acreate_structured_output = staticmethod(counted_structured)


def _install_cap() -> None:
    """Wrap HybridCandidates.finalize: chunks beyond the first `max_units` sessions are dropped."""
    from cognee.modules.retrieval.hybrid import candidates as mod
    from cognee.modules.retrieval.utils.results import payload, result_id

    original = mod.HybridCandidates.finalize

    @functools.wraps(original)
    def capped(self: Any, **kwargs: Any) -> dict:
        out = original(self, **kwargs)
        sessions = chapters_in_order([str(payload(c).get("document_name") or "") for c in out.get("chunks", [])])
        STATE["before"] = sessions
        cut = capped_units(sessions, STATE["max_units"])
        if cut is None:
            return out
        keep, STATE["dropped"] = cut
        chunks = [c for c in out["chunks"] if str(payload(c).get("document_name") or "") in keep]
        ids = {result_id(c) for c in chunks}
        return {**out, "chunks": chunks,
                "chunk_summaries": {k: v for k, v in (out.get("chunk_summaries") or {}).items() if str(k) in ids}}

    mod.HybridCandidates.finalize = capped


def _skip_search_history() -> None:
    """cognee writes every search into its query log (one `queries` and one `results` row), with
    ids from the seeded uuid4 above. A second process that loads the same index draws the same ids
    again, and its first search failed on `UNIQUE constraint failed: queries.id` (measured
    2026-12-05, EpBench-20: a retrieval probe over a run's index). The log is the package's history
    of what users asked, not memory a search reads, so the worker leaves it out and a search no
    longer writes to the index."""
    # the module, not the function of the same name that its package exports
    search_module = importlib.import_module("cognee.modules.search.methods.search")

    async def no_history(*_args: Any, **_kwargs: Any) -> None:
        return None

    search_module.log_search_history = no_history


def _set_clock(when: str) -> None:
    """cognee's temporal hints (modules/engine/utils/temporal_hints.py) parse dates with
    dateparser, which fills what a date leaves out ("in 2022": month and day) from today, and a
    hint like "last week" then depends on the day the index was built: measured, the same chunk
    gave '"Last week" -> 2022-11-24' on 2026-12-01. The session's own date is the 'today' a live
    deployment would have had, and the same on every run."""
    from cognee.modules.engine.utils import temporal_hints

    temporal_hints._SETTINGS["RELATIVE_BASE"] = datetime.fromisoformat(when).replace(tzinfo=None)


async def op_open(p: dict[str, Any]) -> dict[str, Any]:
    from importlib.metadata import version

    info = _configure(p)
    import cognee

    root = Path(p["index_dir"])
    cognee.config.system_root_directory(str(root / "system"))
    cognee.config.data_root_directory(str(root / "data"))
    _install_counters()
    _install_cap()
    _skip_search_history()
    STATE.update(settings=p["settings"], index_dir=root)
    return {"cognee": version("cognee"), "telemetry_disabled": os.environ.get("TELEMETRY_DISABLED"), **info}


def _session_file(unit: dict[str, Any]) -> Path:
    folder = STATE["index_dir"] / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{unit['id']}.txt"
    path.write_text(f"{unit['title']}\n\n{unit['text']}", encoding="utf-8")
    return path


def _calls() -> dict[str, Any]:
    keys = ("chat_attempts", "structured_calls", "structured_ok", "chat_failed", "schema_invalid", "graph_nodes",
            "graph_edges", "summaries", "chat_ms")
    out: dict[str, Any] = {k: TALLY[k] for k in keys}
    failures = {k.split(":", 1)[1]: v for k, v in TALLY.items() if k.startswith("failed:")}
    if failures:
        out["failures"] = failures
    return out


async def op_index(p: dict[str, Any]) -> dict[str, Any]:
    import cognee

    s = STATE["settings"]
    sessions: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for unit in p["units"]:  # one session at a time, in order: add, then cognify what is new
        TALLY.clear()
        NAMES.clear()
        reseed_uuids(DATASET, unit["id"])
        _set_clock(unit["reference_time"])
        t1 = time.perf_counter()
        record: dict[str, Any] = {"unit": unit["id"], "reference_time": unit["reference_time"],
                                  "time_source": unit["time_source"]}
        try:
            await cognee.add(str(_session_file(unit)), dataset_name=DATASET)
            await cognee.cognify(datasets=[DATASET])
        except Exception as exc:
            if s.get("on_session_error") == "fail":
                raise
            log(f"session {unit['id']} failed: {type(exc).__name__}: {exc}")
            record["error"] = f"{type(exc).__name__}: {exc}"[:500]
        names = sorted(set(n for n in NAMES if n))
        body = unit["text"].lower()
        record.update({"entities": names, "entities_not_in_text": [n for n in names if n.lower() not in body],
                       "facts": TALLY["graph_edges"], "seconds": round(time.perf_counter() - t1, 3), **_calls()})
        sessions.append(record)
        log(f"session {unit['id']}: {record['facts']} edges, {len(names)} entities, {TALLY['chat_attempts']} calls")
    (STATE["index_dir"] / "episodes.json").write_text(json.dumps(sessions, indent=1), encoding="utf-8")
    if sessions and all("error" in e for e in sessions):
        raise RuntimeError(f"every session failed to cognify; the first: {sessions[0]['error']}")
    totals: Counter[str] = Counter()
    for e in sessions:
        for k in ("chat_attempts", "structured_calls", "chat_failed", "schema_invalid", "facts"):
            totals[k] += int(e.get(k, 0))
    return {"seconds": round(time.perf_counter() - t0, 2), "episodes": sessions,
            "failed_episodes": [e["unit"] for e in sessions if "error" in e], "totals": dict(totals)}


async def op_load(p: dict[str, Any]) -> dict[str, Any]:
    recorded = json.loads((STATE["index_dir"] / "episodes.json").read_text(encoding="utf-8"))
    have = {e["unit"] for e in recorded}
    missing = [u["id"] for u in p["units"] if u["id"] not in have]
    if missing:
        raise RuntimeError(f"cognee index lacks {len(missing)} session(s) of the corpus ({missing[:5]}); rebuild it")
    return {"sessions": len(recorded)}


async def op_retrieve(p: dict[str, Any]) -> dict[str, Any]:
    import cognee
    from cognee import SearchType
    from cognee.modules.retrieval.utils.results import payload

    s = STATE["settings"]
    STATE.update(max_units=p.get("max_units"), dropped=[], before=[])
    TALLY.clear()
    t0 = time.perf_counter()
    results = await cognee.search(p["question"], query_type=SearchType[s["search_type"]], datasets=[DATASET],
                                  top_k=int(s["top_k"]), only_context=True, verbose=True)
    seconds = round(time.perf_counter() - t0, 3)
    first = results[0] if results else {}
    context = str(first.get("context_result") or "") if isinstance(first, dict) else str(first)
    objects = (first.get("objects_result") if isinstance(first, dict) else None) or {}
    chunks = objects.get("chunks", []) if isinstance(objects, dict) else []
    units = chapters_in_order([str(payload(c).get("document_name") or "") for c in chunks])
    return {
        "context_text": context,
        "units": units,
        "passages": [{"unit": payload(c).get("document_name"), "chunk_index": payload(c).get("chunk_index"),
                      "score": round(float(getattr(c, "score", 0.0) or 0.0), 6)} for c in chunks],
        "records": {k: len(v) for k, v in objects.items() if isinstance(v, list | dict)} if isinstance(
            objects, dict) else {},
        "dropped_units": STATE["dropped"], "chapters_before_cap": STATE["before"],
        "query_calls": _calls(), "timings": {"search_s": seconds},
    }


if __name__ == "__main__":
    log("cognee worker starting")
    serve({"open": op_open, "index": op_index, "load": op_load, "retrieve": op_retrieve})
