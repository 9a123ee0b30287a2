"""mem0 (mem0ai 2.2.1, open-source `Memory`) worker: add each unit's messages in order, then search.

Runs inside the mem0 environment (standard library + that env only), under the egress guard.
The framework (methods/external/mem0.py) decides what each `add` holds (one per session or
chapter, or mem0's LoCoMo recipe: two messages per add from each speaker's view) and caps and
formats what `search` returns; this worker only drives the package:
- chat through `llm.provider: openai` with `openai_base_url` = the framework's proxy, embeddings
  through the same proxy (`embedder.provider: openai`), so every call is cached and counted;
- Qdrant in local mode (`path`, embedded, no server) and the SQLite history, both in the index
  folder; `embedding_model_dims` = what the proxy's embedder returns;
- the unit's date: mem0's OSS `add` builds its extraction prompt with the builder's
  `timestamp` (the prompt's "Observation Date") and `current_date` left unset, so both become the
  day the code runs: the unit's date never reaches the model, and the prompt (hence the cache
  key) changes every day. The worker wraps the builder that `mem0.memory.main` calls to pass the
  unit's date as both ("unknown" for an undated unit), the builder's own parameters, nothing else.
Each memory's metadata names its unit and view (`unit`, `view`, `timestamp`): mem0 2.2.1's add is
ADD-only (no update or delete merges memories), so every memory comes from exactly one add.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from pathlib import Path
from typing import Any

from _serve import KEY, embedding_dimension, log, serve

STATE: dict[str, Any] = {"date": "unknown"}
COLLECTION = "memeval"
LIST_LIMIT = 1_000_000  # get_all's top_k: every memory of a view


def _install_dates() -> None:
    """Give mem0's extraction prompt the unit's date (see the module docstring)."""
    import mem0.memory.main as main

    original = main.generate_additive_extraction_prompt

    @functools.wraps(original)
    def dated(*args: Any, **kwargs: Any) -> str:
        kwargs.setdefault("timestamp", STATE["date"])
        kwargs.setdefault("current_date", STATE["date"])
        return original(*args, **kwargs)

    main.generate_additive_extraction_prompt = dated


def drop_malformed_memories(reply: str) -> tuple[str, int]:
    """The reply with the `memory` items that are not objects with a text left out, and how many.

    mem0 2.2.1 keeps only the items with a `text` (`if m.get("text")`), but calls `.get` on each
    item first, so one item that is not an object ends the whole run with an AttributeError. The
    1.5B model wrote one on EpBench (an object closed early, then the key `"attributed_to"` left
    as a bare string in the list). Leaving such items out is what mem0's own filter means to do;
    the rest of the reply is passed on unchanged. A reply that does not parse is mem0's to handle."""
    try:
        data = json.loads(reply, strict=False)
    except (TypeError, ValueError):
        return reply, 0
    items = data.get("memory") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return reply, 0
    kept = [m for m in items if isinstance(m, dict) and isinstance(m.get("text"), str) and m["text"]]
    dropped = sum(1 for m in items if not isinstance(m, dict))
    if not dropped:
        return reply, 0
    return json.dumps({**data, "memory": kept}, ensure_ascii=False), dropped


class _ExtractionCalls(logging.Handler):
    """mem0 2.2.1's add makes one extraction call and, when it cannot parse the reply (a reply cut
    at max_tokens, a small model's broken JSON), logs an error and stores nothing from it: the
    failure would reach health only as an empty unit. Counts the calls (by wrapping the LLM's
    generate_response), the parse errors mem0 logs, and the replies whose malformed items were
    left out (drop_malformed_memories), per add."""

    PARSE_ERROR = "Error parsing extraction response"

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.calls = 0
        self.unparsed = 0
        self.repaired = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith(self.PARSE_ERROR):
            self.unparsed += 1

    def install(self, memory: Any) -> None:
        logging.getLogger("mem0.memory.main").addHandler(self)
        generate = memory.llm.generate_response

        @functools.wraps(generate)
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            reply = generate(*args, **kwargs)
            if not isinstance(reply, str):
                return reply
            reply, dropped = drop_malformed_memories(reply)
            self.repaired += bool(dropped)
            return reply

        memory.llm.generate_response = counted


def _optional(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def op_open(p: dict[str, Any]) -> dict[str, Any]:
    from importlib.metadata import version

    from mem0 import Memory

    s, llm, emb = p["settings"], p["llm"], p["embedding"]
    root = Path(p["index_dir"])
    dim = embedding_dimension(emb["base_url"], emb["model"])
    llm_config: dict[str, Any] = {"model": llm["model"], "openai_base_url": llm["base_url"], "api_key": KEY}
    for key in ("temperature", "max_tokens", "top_p"):  # None: the package's default
        if s.get(key) is not None:
            llm_config[key] = s[key]
    config = {
        "llm": {"provider": "openai", "config": llm_config},
        "embedder": {"provider": "openai", "config": {"model": emb["model"], "openai_base_url": emb["base_url"],
                                                      "api_key": KEY, "embedding_dims": dim}},
        "vector_store": {"provider": "qdrant", "config": {"collection_name": COLLECTION, "path": str(root / "qdrant"),
                                                          "embedding_model_dims": dim, "on_disk": True}},
        "history_db_path": str(root / "history.db"),
        "custom_instructions": s.get("custom_instructions"),
    }
    memory = Memory.from_config(config)
    _install_dates()
    calls = _ExtractionCalls()
    calls.install(memory)
    STATE.update(memory=memory, settings=s, root=root, config=config, calls=calls)
    cfg = memory.llm.config
    return {"mem0ai": version("mem0ai"), "embedding_dim": dim, "vector_store": "qdrant (local, path)",
            "history": "sqlite", "llm": {"temperature": cfg.temperature, "max_tokens": cfg.max_tokens,
                                         "top_p": cfg.top_p},
            # what mem0 2.2.1 scores with: BM25 needs fastembed, entity boosts need spaCy (+ en_core_web_sm)
            "hybrid": {"bm25_keyword": _optional("fastembed"), "entity_boost": _optional("spacy")},
            "egress_guard": _guard_active()}


def _guard_active() -> bool:
    """Whether the harness's egress guard (workers/egress_guard/sitecustomize.py) is installed."""
    try:
        import sitecustomize
    except ImportError:
        return False
    return bool(getattr(sitecustomize, "GUARD_ACTIVE", False))


def op_index(p: dict[str, Any]) -> dict[str, Any]:
    memory, calls = STATE["memory"], STATE["calls"]
    per_unit: dict[str, dict[str, int]] = {}
    t0 = time.perf_counter()
    for add in p["adds"]:
        STATE["date"] = add.get("observation_date") or "unknown"
        meta = {"unit": add["unit"], "view": add["user_id"], "timestamp": add.get("timestamp") or ""}
        before = calls.calls, calls.unparsed, calls.repaired
        result = memory.add(add["messages"], user_id=add["user_id"], metadata=meta)
        row = per_unit.setdefault(add["unit"], {"adds": 0, "messages": 0, "memories": 0,
                                                "chat_attempts": 0, "schema_invalid": 0, "schema_repaired": 0})
        row["adds"] += 1
        row["messages"] += len(add["messages"])
        row["memories"] += sum(1 for r in (result or {}).get("results", []) if r.get("event") == "ADD")
        row["chat_attempts"] += calls.calls - before[0]
        row["schema_invalid"] += calls.unparsed - before[1]
        row["schema_repaired"] += calls.repaired - before[2]
    seconds = round(time.perf_counter() - t0, 2)
    _reopen()
    texts: dict[str, str] = {}
    for add in p["adds"]:  # what mem0 read of each unit (its first view), for the health counters
        if add["user_id"] == p["adds"][0]["user_id"]:
            texts[add["unit"]] = (texts.get(add["unit"], "") + "\n" + "\n".join(m["content"] for m in add["messages"])).strip()
    dump = _dump(p.get("views") or sorted({a["user_id"] for a in p["adds"]}), p.get("units") or list(per_unit), texts)
    return {"seconds": seconds, "adds": len(p["adds"]), "per_unit": per_unit,
            "memories": len(dump["memories"]), "views": dump["views"]}


def _reopen() -> None:
    """Search the store as saved, in this run and in every run that reuses it: Qdrant's local mode
    reloads points newest first, so a freshly built collection and a reloaded one break equal
    scores in opposite orders (the same question would get another context, and a rerun would
    pay for new answers)."""
    from mem0 import Memory

    old = STATE["memory"]
    old.vector_store.client.close()
    old.close()
    STATE["memory"] = Memory.from_config(STATE["config"])


def _dump(views: list[str], units: list[str], texts: dict[str, str]) -> dict[str, Any]:
    """Every stored memory with its unit, in package/memories.json (read by the health counters)."""
    memory = STATE["memory"]
    rows = []
    for view in views:
        for m in memory.get_all(filters={"user_id": view}, top_k=LIST_LIMIT).get("results", []):
            meta = m.get("metadata") or {}
            rows.append({"id": m["id"], "view": view, "unit": meta.get("unit"), "timestamp": meta.get("timestamp"),
                         "memory": m.get("memory", "")})
    # by unit, then text: mem0's ids are random, so a rebuilt index lists the same memories in the same order
    rows.sort(key=lambda r: (units.index(r["unit"]) if r["unit"] in units else len(units), r["view"],
                             r["memory"], r["id"]))
    dump = {"units": units, "views": views, "memories": rows, "unit_texts": texts}
    (STATE["root"] / "memories.json").write_text(json.dumps(dump, ensure_ascii=False, indent=1), encoding="utf-8")
    return dump


def op_load(p: dict[str, Any]) -> dict[str, Any]:
    memory = STATE["memory"]
    counts = {v: len(memory.get_all(filters={"user_id": v}, top_k=LIST_LIMIT).get("results", []))
              for v in p.get("views") or []}
    dumped = json.loads((STATE["root"] / "memories.json").read_text(encoding="utf-8"))
    if sum(counts.values()) != len(dumped["memories"]):
        raise RuntimeError(f"mem0 store holds {sum(counts.values())} memories, memories.json {len(dumped['memories'])}: "
                           f"the index is incomplete (a bundle's readable copy ships without the store); delete "
                           f"{STATE['root'].parent} and run again: it is rebuilt from the model-call cache")
    return {"memories": sum(counts.values()), "views": counts}


def op_search(p: dict[str, Any]) -> dict[str, Any]:
    """mem0's own search, once per view (top_k each); no model call but the query's embedding."""
    memory = STATE["memory"]
    hits = []
    t0 = time.perf_counter()
    for view in p["views"]:
        found = memory.search(p["question"], filters={"user_id": view}, top_k=int(p["top_k"])).get("results", [])
        for rank, m in enumerate(found):
            meta = m.get("metadata") or {}
            hits.append({"view": view, "rank": rank, "id": m["id"], "memory": m.get("memory", ""),
                         "score": m.get("score"), "unit": meta.get("unit"), "timestamp": meta.get("timestamp")})
    return {"hits": hits, "timings": {"search_s": round(time.perf_counter() - t0, 3)}}


def op_close(p: dict[str, Any]) -> dict[str, Any]:
    memory = STATE.pop("memory", None)
    if memory is not None:  # Qdrant's local client too: left to __del__ it fails at interpreter exit
        memory.vector_store.client.close()
        memory.close()
    return {}


if __name__ == "__main__":
    log("mem0 worker starting")
    serve({"open": op_open, "index": op_index, "load": op_load, "search": op_search, "close": op_close})
