"""Graphiti (graphiti-core 0.31.2, Zep's engine) worker: sessions as episodes into an embedded Kuzu
graph, in order, each with its date; then the package's own fact search per question.

Runs inside the graphiti environment (standard library + that env only). Every model the package
could default to (OpenAI's LLM, embedder and cross-encoder) is passed explicitly and pointed at
the framework's proxy; telemetry is off (GRAPHITI_TELEMETRY_ENABLED=false, checked at open) and
the egress guard refuses anything else. The graph lives in the index folder (graph.kuzu).

Episodes: one per unit, `add_episode(name=unit id, reference_time=unit date, group_id=corpus)`
awaited one after another, as the package asks. Each episode's model calls are counted here
(chat attempts, replies that are not valid JSON or fail the package's response schema, embedding
requests), so the index health can show what a small model broke.

Retrieval: `Graphiti.search(question, group_ids=[corpus], num_results=k)` (hybrid BM25 + cosine,
RRF; no cross-encoder call). A fact's units are the sessions of the episodes it was extracted
from; facts are kept in the package's rank order while their sessions fit within the context
cap, and the rest are reported as dropped.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
import uuid
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from _serve import KEY, chapters_in_order, embedding_dimension, log, serve

STATE: dict[str, Any] = {}
TALLY: Counter[str] = Counter()  # this episode's (or query's) calls
_UUIDS = random.Random(0)


def _seeded_uuid4() -> uuid.UUID:
    return uuid.UUID(int=_UUIDS.getrandbits(128), version=4)


def reseed_uuids(*parts: str) -> None:
    """Node and edge uuids drawn from a generator seeded per episode, not from os.urandom.

    Graphiti orders the candidates it shows the model (facts to deduplicate, entities to merge)
    by search scores whose ties fall back on the order of uuids; with random uuids a rebuild of
    the same corpus from the cache sent 14-20 of 213 prompts with candidates in another order
    (measured with the scripted server), each a new paid call. Seeded per episode, the same
    episode draws the same uuids, and a rebuild replays from the cache.
    """
    _UUIDS.seed(hashlib.sha256("\x00".join(parts).encode()).digest())


uuid.uuid4 = _seeded_uuid4  # before graphiti_core is imported: nodes.py and edges.py bind it by name


def _counting_clients() -> tuple[type, type]:
    """The package's OpenAI-compatible LLM client and embedder, counting what they do."""
    from graphiti_core.embedder.openai import OpenAIEmbedder
    from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient

    class CountingLLM(OpenAIGenericClient):
        async def _generate_response(self, messages: Any, response_model: Any = None, *args: Any,
                                     **kwargs: Any) -> dict[str, Any]:
            TALLY["chat_attempts"] += 1
            t0 = time.perf_counter()
            try:
                out = await super()._generate_response(messages, response_model, *args, **kwargs)
            except Exception as exc:
                TALLY["chat_failed"] += 1
                TALLY[f"failed:{type(exc).__name__}"] += 1
                raise
            finally:
                TALLY["chat_ms"] += round(1000 * (time.perf_counter() - t0))
            if response_model is not None:
                try:  # counted only: the package validates (or not) exactly as it would
                    response_model.model_validate(out)
                except Exception:
                    TALLY["schema_invalid"] += 1
            return out

    class CountingEmbedder(OpenAIEmbedder):
        async def create(self, input_data: Any) -> list[float]:
            TALLY["embedding_requests"] += 1
            t0 = time.perf_counter()
            try:
                return await super().create(input_data)
            finally:
                TALLY["embedding_ms"] += round(1000 * (time.perf_counter() - t0))

        async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
            TALLY["embedding_requests"] += 1
            t0 = time.perf_counter()
            try:
                return await super().create_batch(input_data_list)
            finally:
                TALLY["embedding_ms"] += round(1000 * (time.perf_counter() - t0))

    return CountingLLM, CountingEmbedder


async def _kuzu_fulltext_indexes(driver: Any) -> list[str]:
    """Create the Kuzu fulltext indexes the package's search queries (once per database).

    graphiti-core 0.31.2: KuzuDriver.build_indices_and_constraints is a no-op whose comment says
    the indexes come with setup_schema, but the schema holds none, so every search fails with
    "Table RelatesToNode_ doesn't have an index with name edge_name_and_fact". The indexes made
    here are the package's own list for Kuzu (graph_queries.get_fulltext_indices), which its
    Kuzu graph operations would run; an existing one (a reopened graph) is left as it is.
    """
    import re

    from graphiti_core.driver.driver import GraphProvider
    from graphiti_core.graph_queries import get_fulltext_indices

    rows, _, _ = await driver.execute_query("CALL SHOW_INDEXES() RETURN *")
    have = {str(v) for row in rows for v in row.values()}
    made = []
    for query in get_fulltext_indices(GraphProvider.KUZU):
        name = re.search(r"CREATE_FTS_INDEX\('[^']+', '([^']+)'", query)
        if name and name.group(1) not in have:
            await driver.execute_query(query)
            made.append(name.group(1))
    return made


def _single_threaded(driver: Any) -> None:
    """One Kuzu query at a time, each on one thread, so that equal scores come back in one order.

    With Kuzu's default (every core per query) a rebuild from the cache still sent one prompt
    of 213 whose last candidate fact differed (a tie at the search limit, measured); the
    connection is the package's own kind (kuzu.AsyncConnection), only its thread counts change.
    """
    import kuzu

    driver.client.close()
    driver.client = kuzu.AsyncConnection(driver.db, max_concurrent_queries=1, max_threads_per_query=1)


async def op_open(p: dict[str, Any]) -> dict[str, Any]:
    from importlib.metadata import version

    from graphiti_core import Graphiti
    from graphiti_core.cross_encoder.openai_reranker_client import OpenAIRerankerClient
    from graphiti_core.driver.kuzu_driver import KuzuDriver
    from graphiti_core.embedder.openai import OpenAIEmbedderConfig
    from graphiti_core.llm_client.config import LLMConfig
    from graphiti_core.telemetry.telemetry import is_telemetry_enabled

    if is_telemetry_enabled():
        raise RuntimeError("Graphiti telemetry is enabled: the worker must run with GRAPHITI_TELEMETRY_ENABLED=false")
    s, llm, emb = p["settings"], p["llm"], p["embedding"]
    dim = embedding_dimension(emb["base_url"], emb["model"])
    config: dict[str, Any] = {"api_key": KEY, "model": llm["model"], "small_model": llm["model"],
                              "base_url": llm["base_url"]}
    if s.get("max_tokens") is not None:
        config["max_tokens"] = int(s["max_tokens"])
    if s.get("temperature") is not None:
        config["temperature"] = float(s["temperature"])
    llm_config = LLMConfig(**config)
    counting_llm, counting_embedder = _counting_clients()
    client = counting_llm(llm_config, max_tokens=llm_config.max_tokens,
                          structured_output_mode=s.get("structured_output", "json_schema"))
    embedder = counting_embedder(OpenAIEmbedderConfig(embedding_model=emb["model"], api_key=KEY,
                                                      base_url=emb["base_url"], embedding_dim=dim))
    # passed so that nothing defaults to OpenAI; search() ranks by RRF and never calls it
    reranker = OpenAIRerankerClient(config=LLMConfig(api_key=KEY, model=llm["model"], base_url=llm["base_url"]))
    driver = KuzuDriver(db=str(Path(p["index_dir"]) / "graph.kuzu"))
    _single_threaded(driver)
    graphiti = Graphiti(graph_driver=driver, llm_client=client, embedder=embedder, cross_encoder=reranker,
                        max_coroutines=int(s.get("max_coroutines", 4)))
    await graphiti.build_indices_and_constraints()
    fulltext = await _kuzu_fulltext_indexes(driver)
    STATE.update(graphiti=graphiti, settings=s, index_dir=Path(p["index_dir"]))
    return {"graphiti_core": version("graphiti-core"), "kuzu": version("kuzu"), "embedding_dim": dim,
            "max_tokens": client.max_tokens, "temperature": client.temperature,
            "structured_output": client.structured_output_mode, "telemetry": is_telemetry_enabled(),
            "fulltext_indexes_created": fulltext}


def _episode_record(unit: dict[str, Any], result: Any, seconds: float) -> dict[str, Any]:
    names = sorted(n.name for n in result.nodes)
    body = unit["text"].lower()
    return {"unit": unit["id"], "reference_time": unit["reference_time"], "time_source": unit["time_source"],
            "source": unit["source"], "entities": names,
            "entities_not_in_text": [n for n in names if n.lower() not in body],  # read by the health counters
            "facts": len(result.edges), "invalidated": sum(1 for e in result.edges if e.invalid_at is not None),
            "seconds": round(seconds, 3), **_calls()}


def _calls() -> dict[str, Any]:
    out = {k: TALLY[k] for k in ("chat_attempts", "chat_failed", "schema_invalid", "embedding_requests",
                                 "chat_ms", "embedding_ms")}  # ms: summed over calls, which may overlap
    failures = {k.split(":", 1)[1]: v for k, v in TALLY.items() if k.startswith("failed:")}
    if failures:
        out["failures"] = failures
    return out


async def op_index(p: dict[str, Any]) -> dict[str, Any]:
    from graphiti_core.nodes import EpisodeType

    graphiti, s = STATE["graphiti"], STATE["settings"]
    STATE["group"] = _group(p["units"])
    episodes: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for unit in p["units"]:  # in order, each awaited before the next (the package's requirement)
        TALLY.clear()
        reseed_uuids(STATE["group"], unit["id"])
        t1 = time.perf_counter()
        try:
            result = await graphiti.add_episode(
                name=unit["id"], episode_body=unit["text"], source=EpisodeType(unit["source"]),
                source_description=s["source_description"],
                reference_time=datetime.fromisoformat(unit["reference_time"]), group_id=STATE["group"])
        except Exception as exc:
            if s.get("on_episode_error") == "fail":
                raise
            log(f"episode {unit['id']} failed: {type(exc).__name__}: {exc}")
            episodes.append({"unit": unit["id"], "reference_time": unit["reference_time"],
                             "time_source": unit["time_source"], "error": f"{type(exc).__name__}: {exc}"[:500],
                             "entities": [], "facts": 0, "seconds": round(time.perf_counter() - t1, 3), **_calls()})
            continue
        episodes.append(_episode_record(unit, result, time.perf_counter() - t1))
        log(f"episode {unit['id']}: {episodes[-1]['facts']} facts, {len(result.nodes)} entities, "
            f"{TALLY['chat_attempts']} chat calls")
    (STATE["index_dir"] / "episodes.json").write_text(json.dumps(episodes, indent=1), encoding="utf-8")
    if episodes and all("error" in e for e in episodes):
        raise RuntimeError(f"every episode failed to ingest; the first: {episodes[0]['error']}")
    totals = Counter()
    for e in episodes:
        for k in ("chat_attempts", "chat_failed", "schema_invalid", "embedding_requests", "facts"):
            totals[k] += int(e.get(k, 0))
    return {"seconds": round(time.perf_counter() - t0, 2), "episodes": episodes,
            "failed_episodes": [e["unit"] for e in episodes if "error" in e], "totals": dict(totals)}


async def _unit_of_episode() -> dict[str, str]:
    """Episode uuid -> unit id, from the graph itself (episodes are named by their unit)."""
    if "episode_units" not in STATE:
        from graphiti_core.nodes import EpisodicNode

        graphiti = STATE["graphiti"]
        found = await EpisodicNode.get_by_group_ids(graphiti.driver, [STATE["group"]])
        STATE["episode_units"] = {e.uuid: e.name for e in found}
    return STATE["episode_units"]


def _group(units: list[dict[str, Any]]) -> str:
    """The corpus' group id. graphiti-core 0.31.2 compares a group id with `driver._database`,
    which KuzuDriver never sets (AttributeError on every add_episode with a group id); the one
    embedded database holds this one group, so it is named after it, the package's own
    single-database case (the shared driver, no clone)."""
    groups = {u["group_id"] for u in units}
    if len(groups) != 1:
        raise ValueError(f"one worker holds one corpus (one group id), got {sorted(groups)}")
    group = groups.pop()
    STATE["graphiti"].driver._database = group
    return group


async def op_load(p: dict[str, Any]) -> dict[str, Any]:
    STATE["group"] = _group(p["units"])
    units = set((await _unit_of_episode()).values())
    missing = [u["id"] for u in p["units"] if u["id"] not in units]
    recorded = json.loads((STATE["index_dir"] / "episodes.json").read_text(encoding="utf-8"))
    failed = {e["unit"] for e in recorded if "error" in e}
    missing = [u for u in missing if u not in failed]  # a failed episode was recorded as such
    if missing:
        raise RuntimeError(f"Graphiti graph lacks {len(missing)} episode(s) of the corpus ({missing[:5]}); rebuild it")
    return {"episodes": len(units)}


def _when(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _line(edge: Any) -> str:
    """A fact as the answering model reads it: the fact and the time the package says it held."""
    start = edge.valid_at.date().isoformat() if edge.valid_at else "unknown"
    end = edge.invalid_at.date().isoformat() if edge.invalid_at else "present"
    return f"- {edge.fact} (valid {start} to {end})"


async def op_retrieve(p: dict[str, Any]) -> dict[str, Any]:
    graphiti, s = STATE["graphiti"], STATE["settings"]
    TALLY.clear()
    t0 = time.perf_counter()
    edges = await graphiti.search(p["question"], group_ids=[STATE["group"]], num_results=int(s["num_results"]))
    seconds = round(time.perf_counter() - t0, 3)
    to_unit = await _unit_of_episode()
    cap = p.get("max_units")
    kept: list[Any] = []
    kept_units: list[str] = []
    facts, dropped = [], []
    for edge in edges:
        units = chapters_in_order([to_unit.get(e, "") for e in (edge.episodes or [])])
        record = {"fact": edge.fact, "units": units, "valid_at": _when(edge.valid_at),
                  "invalid_at": _when(edge.invalid_at), "expired_at": _when(edge.expired_at)}
        union = chapters_in_order(kept_units + units)
        if cap is not None and len(union) > int(cap):
            dropped.append(record)
            continue
        kept.append(edge)
        kept_units = union
        facts.append(record)
    context = ""
    if kept:
        context = "Facts from the memory graph (most relevant first), with when each held:\n" + "\n".join(
            _line(e) for e in kept)
    return {"context_text": context, "units": kept_units, "facts": facts, "dropped_facts": dropped,
            "units_before_cap": chapters_in_order(
                [u for e in edges for u in (to_unit.get(x, "") for x in (e.episodes or []))]),
            "search_results": len(edges), "query_calls": _calls(), "timings": {"search_s": seconds}}


async def op_close(p: dict[str, Any]) -> dict[str, Any]:
    graphiti = STATE.get("graphiti")
    if graphiti is not None:
        await graphiti.close()
    return {}


if __name__ == "__main__":
    log(f"graphiti worker starting (telemetry env {os.environ.get('GRAPHITI_TELEMETRY_ENABLED')!r})")
    serve({"open": op_open, "index": op_index, "load": op_load, "retrieve": op_retrieve, "close": op_close})
