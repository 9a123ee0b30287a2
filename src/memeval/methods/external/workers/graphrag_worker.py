"""GraphRAG (graphrag 3.3) worker: standard indexing, then the local-search context per question.

Runs inside the graphrag environment; imports only graphrag, its dependencies and the standard
library. Chapters are GraphRAG documents (id = unit id), chunked by GraphRAG itself. Retrieval
builds exactly the context LocalSearch would put in its prompt (LocalSearchMixedContext with the
factory's parameters) and stops before the answer call: the framework answers.

Context cap: the entity, relationship and community tables cannot be traced to single chapters,
but the Sources table (text units) can. When the package's Sources section draws on more chapters
than the cap allows, the text-unit pool is restricted to the first `max_units` chapters in the
package's own ranking and the section is rebuilt by the package (the freed budget is refilled
from those chapters), so the reported chapters are exactly those whose text is in the context.
"""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import pandas as pd
from _serve import capped_units, chapters_in_order, log, serve

STATE: dict[str, Any] = {}
TABLES = ["communities", "community_reports", "text_units", "relationships", "entities"]


def embedding_dimension(base_url: str, model: str) -> int:
    """Ask the endpoint once: GraphRAG's vector store needs the size up front (default 3072)."""
    req = urllib.request.Request(base_url.rstrip("/") + "/embeddings", method="POST",
                                 data=json.dumps({"model": model, "input": ["dimension probe"]}).encode(),
                                 headers={"Content-Type": "application/json",
                                          "Authorization": "Bearer sk-memeval-local-proxy"})
    with urllib.request.urlopen(req, timeout=600) as resp:
        return len(json.loads(resp.read())["data"][0]["embedding"])


def build_config(p: dict[str, Any]) -> Any:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

    root = Path(p["index_dir"])
    s = p["settings"]
    llm, emb = p["llm"], p["embedding"]
    dim = embedding_dimension(emb["base_url"], emb["model"])
    model = {"model_provider": "openai", "api_key": "sk-memeval-local-proxy",
             "retry": {"type": "exponential_backoff"}}
    cfg = {
        "completion_models": {"default_completion_model": {
            **model, "model": llm["model"], "api_base": llm["base_url"]}},
        "embedding_models": {"default_embedding_model": {
            **model, "model": emb["model"], "api_base": emb["base_url"]}},
        "concurrent_requests": int(s.get("concurrent_requests", 4)),
        "input_storage": {"type": "file", "base_dir": str(root / "input")},
        "output_storage": {"type": "file", "base_dir": str(root / "output")},
        "update_output_storage": {"type": "file", "base_dir": str(root / "update_output")},
        "cache": {"type": "json", "storage": {"type": "file", "base_dir": str(root / "cache")}},
        "reporting": {"type": "file", "base_dir": str(root / "logs")},
        "vector_store": {"type": "lancedb", "db_uri": str(root / "output" / "lancedb"),
                         "vector_size": dim},
        "chunking": {"size": int(s["chunk_size"]), "overlap": int(s["chunk_overlap"]),
                     # "title: Session 1 (4:04 pm on 20 January, 2023)." heads each of the unit's chunks
                     **({"prepend_metadata": ["title"]} if s.get("unit_titles") else {})},
        "local_search": {"max_context_tokens": int(s["max_context_tokens"]),
                         "text_unit_prop": float(s["text_unit_prop"]),
                         "community_prop": float(s["community_prop"]),
                         "top_k_entities": int(s["top_k_entities"]),
                         "top_k_relationships": int(s["top_k_relationships"])},
    }
    if s.get("community_report_max_tokens"):
        # GraphRAG asks for no limit, so the proxy would apply the answering model's max_tokens
        # (512 by default): a report is a long JSON object, and cut there it never validates
        cfg["completion_models"]["community_report_model"] = {
            **model, "model": llm["model"], "api_base": llm["base_url"],
            "call_args": {"max_completion_tokens": int(s["community_report_max_tokens"])}}
        cfg["community_reports"] = {"completion_model_id": "community_report_model"}
    return GraphRagConfig(**cfg), dim


def op_open(p: dict[str, Any]) -> dict[str, Any]:
    import graphrag

    config, dim = build_config(p)
    STATE.update(config=config, settings=p["settings"], root=Path(p["index_dir"]), engine=None)
    return {"graphrag": getattr(graphrag, "__version__", None) or _version("graphrag"),
            "vector_size": dim, "chunking": config.chunking.model_dump(),
            "local_search": config.local_search.model_dump()}


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


def _doc_map(units: list[dict[str, Any]]) -> None:
    STATE["unit_ids"] = [u["id"] for u in units]


async def op_index(p: dict[str, Any]) -> dict[str, Any]:
    from graphrag.api import build_index

    units = p["units"]
    _doc_map(units)
    docs = pd.DataFrame([{"id": u["id"], "title": u["title"], "text": u["text"],
                          "creation_date": "", "human_readable_id": i, "raw_data": None}
                         for i, u in enumerate(units)])
    t0 = time.perf_counter()
    outputs = await build_index(config=STATE["config"], input_documents=docs)
    failed = [(o.workflow, o.error) for o in outputs if o.error is not None]
    if failed:
        wf, err = failed[0]
        raise RuntimeError(f"GraphRAG workflow {wf} failed: {type(err).__name__}: {err}") from err
    tables = await _load_tables()
    return {"seconds": round(time.perf_counter() - t0, 2), "workflows": [o.workflow for o in outputs],
            "counts": {k: (0 if v is None else len(v)) for k, v in tables.items()}}


async def _load_tables() -> dict[str, Any]:
    from graphrag.data_model.data_reader import DataReader
    from graphrag_storage import create_storage
    from graphrag_storage.tables.table_provider_factory import create_table_provider

    config = STATE["config"]
    provider = create_table_provider(config.table_provider, storage=create_storage(config.output_storage))
    reader = DataReader(provider)
    tables = {name: await getattr(reader, name)() for name in TABLES}
    tables["covariates"] = await reader.covariates() if await provider.has("covariates") else None
    STATE["tables"] = tables
    return tables


async def op_load(p: dict[str, Any]) -> dict[str, Any]:
    _doc_map(p["units"])
    tables = await _load_tables()
    return {"counts": {k: (0 if v is None else len(v)) for k, v in tables.items()}}


def _engine() -> Any:
    """The same LocalSearch the package's API builds (factory, adapters, vector store)."""
    if STATE.get("engine") is not None:
        return STATE["engine"]
    from graphrag.config.embeddings import entity_description_embedding
    from graphrag.query.factory import get_local_search_engine
    from graphrag.query.indexer_adapters import (
        read_indexer_covariates,
        read_indexer_entities,
        read_indexer_relationships,
        read_indexer_reports,
        read_indexer_text_units,
    )
    from graphrag.utils.api import get_embedding_store, load_search_prompt

    config, t, s = STATE["config"], STATE["tables"], STATE["settings"]
    level = s.get("community_level", 2)
    store = get_embedding_store(config=config.vector_store, embedding_name=entity_description_embedding)
    covariates = read_indexer_covariates(t["covariates"]) if t["covariates"] is not None else []
    engine = get_local_search_engine(
        config=config,
        reports=read_indexer_reports(t["community_reports"], t["communities"], level),
        text_units=read_indexer_text_units(t["text_units"]),
        entities=read_indexer_entities(t["entities"], t["communities"], level),
        relationships=read_indexer_relationships(t["relationships"]),
        covariates={"claims": covariates},
        description_embedding_store=store,
        response_type=s.get("response_type", "Multiple Paragraphs"),
        system_prompt=load_search_prompt(config.local_search.prompt),
    )
    STATE["engine"] = engine
    return engine


def _capped_text_units(builder: Any, max_units: int | None, report: dict[str, Any]) -> None:
    """Wrap the builder's Sources step so it never draws on more than `max_units` chapters."""
    original = type(builder)._build_text_unit_context
    by_short = {str(tu.short_id): tu for tu in builder.text_units.values()}

    def chapters_of(data: dict[str, Any]) -> list[str]:
        df = data.get("sources")
        if df is None or len(df) == 0 or "id" not in df:
            return []
        return chapters_in_order([by_short[str(i)].document_id for i in df["id"] if str(i) in by_short])

    def capped(self: Any, *args: Any, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        text, data = original(self, *args, **kwargs)
        chapters = chapters_of(data)
        report["chapters_before_cap"] = chapters
        cut = capped_units(chapters, max_units)
        if cut is None:
            return text, data
        keep, dropped = cut
        pool = self.text_units
        self.text_units = {k: v for k, v in pool.items() if v.document_id in keep}
        try:
            text, data = original(self, *args, **kwargs)
        finally:
            self.text_units = pool
        report["dropped_units"] = dropped
        return text, data

    builder._build_text_unit_context = capped.__get__(builder)


def op_retrieve(p: dict[str, Any]) -> dict[str, Any]:
    engine = _engine()
    builder = engine.context_builder
    report: dict[str, Any] = {"dropped_units": []}
    _capped_text_units(builder, p.get("max_units"), report)
    t0 = time.perf_counter()
    result = builder.build_context(query=p["question"], **engine.context_builder_params)
    seconds = round(time.perf_counter() - t0, 3)
    records = result.context_records or {}
    by_short = {str(tu.short_id): tu for tu in builder.text_units.values()}
    sources = records.get("sources")
    source_ids = [str(i) for i in sources["id"]] if sources is not None and len(sources) else []
    units = chapters_in_order([by_short[i].document_id for i in source_ids if i in by_short])
    tokenizer = engine.tokenizer
    return {
        "context_text": result.context_chunks,
        "units": units,
        "passages": [{"text_unit": i, "unit": by_short[i].document_id} for i in source_ids if i in by_short],
        "dropped_units": report["dropped_units"],
        "chapters_before_cap": report.get("chapters_before_cap", []),
        "records": {k: int(len(v)) for k, v in records.items() if hasattr(v, "__len__")},
        "package_usage": {"llm_calls": result.llm_calls, "prompt_tokens": result.prompt_tokens,
                          "output_tokens": result.output_tokens,
                          "context_tokens_package_tokenizer": len(tokenizer.encode(result.context_chunks))},
        "timings": {"build_context_s": seconds},
    }


async def op_answer(p: dict[str, Any]) -> dict[str, Any]:
    """The package's own answer: LocalSearch.search with its system prompt, from the capped context."""
    engine = _engine()
    report: dict[str, Any] = {"dropped_units": []}
    _capped_text_units(engine.context_builder, p.get("max_units"), report)
    t0 = time.perf_counter()
    result = await engine.search(p["question"])
    if not result.response:  # search() logs and returns "" when the answer call fails
        raise RuntimeError("GraphRAG local search produced no answer; see the worker log")
    return {"answer": result.response, "context_text": result.context_text,
            "prompt": "graphrag local search system prompt", "dropped_units": report["dropped_units"],
            "timings": {"search_s": round(time.perf_counter() - t0, 3)}}


if __name__ == "__main__":
    log("graphrag worker starting")
    serve({"open": op_open, "index": op_index, "load": op_load, "retrieve": op_retrieve, "answer": op_answer})
