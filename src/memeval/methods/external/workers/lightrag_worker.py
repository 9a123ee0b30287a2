"""LightRAG (lightrag-hku 1.5.7) worker: insert chapters, then the hybrid-mode context per question.

Runs inside the lightrag environment (standard library + that env only). Each chapter is one
document whose id and file_path are the unit id, so every chunk in the context names its chapter.
Retrieval is the package's own query with only_need_context=True: LightRAG extracts keywords,
searches entities/relations/chunks and builds its context, and never calls the answer model.

Context cap: entities and relations are summaries that cannot be traced to one chapter; the
Document Chunks can. The package's chunk merge step (entity-, relation- and vector-sourced chunks,
round robin) is wrapped so chunks from chapters beyond the first `max_units` (in the package's
merge order) are dropped before LightRAG truncates and formats the context.
"""

from __future__ import annotations

import functools
import time
from typing import Any

from _serve import KEY, capped_units, chapters_in_order, embedding_dimension, log, serve

STATE: dict[str, Any] = {"max_units": None, "dropped": [], "before": []}


def _install_cap() -> None:
    """Wrap operate._merge_all_chunks (looked up at call time by the query path)."""
    import lightrag.operate as operate

    original = operate._merge_all_chunks

    @functools.wraps(original)
    async def capped(*args: Any, **kwargs: Any) -> list[dict]:
        merged = await original(*args, **kwargs)
        chapters = chapters_in_order([c.get("file_path", "") for c in merged])
        STATE["before"] = chapters
        cut = capped_units(chapters, STATE["max_units"])
        if cut is None:
            return merged
        keep, STATE["dropped"] = cut
        return [c for c in merged if c.get("file_path") in keep]

    operate._merge_all_chunks = capped


async def op_open(p: dict[str, Any]) -> dict[str, Any]:
    from lightrag import LightRAG
    from lightrag import constants as C
    from lightrag.llm.openai import openai_complete_if_cache, openai_embed
    from lightrag.utils import EmbeddingFunc

    s, llm, emb = p["settings"], p["llm"], p["embedding"]
    dim = embedding_dimension(emb["base_url"], emb["model"])

    async def complete(prompt: str, system_prompt: str | None = None,
                       history_messages: list | None = None, **kwargs: Any) -> str:
        kwargs.pop("hashing_kv", None)
        return await openai_complete_if_cache(llm["model"], prompt, system_prompt=system_prompt,
                                              history_messages=history_messages or [],
                                              base_url=llm["base_url"], api_key=KEY, **kwargs)

    embed = EmbeddingFunc(embedding_dim=dim, max_token_size=int(s.get("embedding_max_tokens", 8192)),
                          model_name=emb["model"],
                          func=functools.partial(openai_embed.func, model=emb["model"],
                                                 base_url=emb["base_url"], api_key=KEY))
    # Every setting that LightRAG would otherwise read from the environment is passed here,
    # at the package's own defaults unless the paper (Table 9) says otherwise.
    rag = LightRAG(
        working_dir=p["index_dir"], workspace="",
        llm_model_func=complete, llm_model_name=llm["model"], embedding_func=embed,
        chunk_token_size=int(s["chunk_token_size"]), chunk_overlap_token_size=int(s["chunk_overlap_token_size"]),
        tiktoken_model_name=s.get("tiktoken_model_name", "gpt-4o-mini"),
        top_k=int(s.get("top_k", C.DEFAULT_TOP_K)), chunk_top_k=int(s.get("chunk_top_k", C.DEFAULT_CHUNK_TOP_K)),
        max_entity_tokens=int(s.get("max_entity_tokens", C.DEFAULT_MAX_ENTITY_TOKENS)),
        max_relation_tokens=int(s.get("max_relation_tokens", C.DEFAULT_MAX_RELATION_TOKENS)),
        max_total_tokens=int(s.get("max_total_tokens", C.DEFAULT_MAX_TOTAL_TOKENS)),
        related_chunk_number=C.DEFAULT_RELATED_CHUNK_NUMBER, kg_chunk_pick_method=C.DEFAULT_KG_CHUNK_PICK_METHOD,
        entity_extract_max_gleaning=int(s.get("max_gleaning", C.DEFAULT_MAX_GLEANING)),
        cosine_better_than_threshold=C.DEFAULT_COSINE_THRESHOLD,
        llm_model_max_async=int(s.get("llm_max_async", 4)), embedding_func_max_async=4,
        max_parallel_insert=int(s.get("max_parallel_insert", 2)),
        enable_llm_cache=True, enable_llm_cache_for_entity_extract=True,
        addon_params={"language": s.get("language", "English")},
    )
    await rag.initialize_storages()
    _install_cap()
    STATE.update(rag=rag, settings=s)
    from importlib.metadata import version

    chunker = (getattr(rag, "addon_params", None) or {}).get("chunker", {})
    chunker = chunker if isinstance(chunker, dict) else {}
    return {"lightrag": version("lightrag-hku"), "embedding_dim": dim,
            "chunk_token_size": chunker.get("chunk_token_size"),
            "chunker_fixed_token": chunker.get("fixed_token"),
            "top_k": rag.top_k, "chunk_top_k": rag.chunk_top_k, "max_total_tokens": rag.max_total_tokens}


async def op_index(p: dict[str, Any]) -> dict[str, Any]:
    rag = STATE["rag"]
    units = p["units"]
    t0 = time.perf_counter()
    await rag.ainsert([u["title"] + "\n" + u["text"] for u in units],
                      ids=[u["id"] for u in units], file_paths=[u["id"] for u in units])
    failed = await _failed_docs([u["id"] for u in units])
    if failed:
        raise RuntimeError(f"LightRAG did not process {len(failed)} document(s): {failed[:3]}")
    return {"seconds": round(time.perf_counter() - t0, 2), "documents": len(units)}


async def _failed_docs(ids: list[str]) -> list[str]:
    rag = STATE["rag"]
    out = []
    for doc_id in ids:
        status = await rag.doc_status.get_by_id(doc_id)
        value = (status or {}).get("status")
        value = getattr(value, "value", value)
        if str(value).lower() != "processed":
            out.append(f"{doc_id}: {value} {(status or {}).get('error_msg') or ''}".strip())
    return out


async def op_load(p: dict[str, Any]) -> dict[str, Any]:
    failed = await _failed_docs([u["id"] for u in p["units"]])
    if failed:
        raise RuntimeError(f"LightRAG index is incomplete: {failed[:3]}")
    return {"documents": len(p["units"])}


def _param(only_need_context: bool) -> Any:
    from lightrag import QueryParam

    rag, s = STATE["rag"], STATE["settings"]
    return QueryParam(mode=s.get("mode", "hybrid"), only_need_context=only_need_context, stream=False,
                      response_type=s.get("response_type", "Multiple Paragraphs"),
                      top_k=rag.top_k, chunk_top_k=rag.chunk_top_k,
                      max_entity_tokens=rag.max_entity_tokens, max_relation_tokens=rag.max_relation_tokens,
                      max_total_tokens=rag.max_total_tokens, enable_rerank=False)


def raise_if_failed(result: dict[str, Any] | None, seconds: float) -> None:
    """LightRAG returns an exception inside a query (a keyword call past its 240 s timeout, on a
    loaded machine) as a result with status "failure", shaped like an empty context. Answering
    from it would score a crash as the method's retrieval, so it is raised: the run stops, says
    why, and resumes from the cache. The one failure that is a result is "no_results": the graph
    had nothing for the query, and LightRAG's no-context marker is the context."""
    result = result or {}
    if result.get("status") == "failure" and (result.get("metadata") or {}).get("failure_reason") != "no_results":
        raise RuntimeError(f"LightRAG's query failed after {seconds:.0f} s: {result.get('message') or 'no message'}")


async def op_retrieve(p: dict[str, Any]) -> dict[str, Any]:
    rag = STATE["rag"]
    STATE.update(max_units=p.get("max_units"), dropped=[], before=[])
    t0 = time.perf_counter()
    result = await rag.aquery_llm(p["question"], _param(only_need_context=True))
    seconds = round(time.perf_counter() - t0, 3)
    raise_if_failed(result, seconds)
    context = ((result or {}).get("llm_response") or {}).get("content") or ""
    data = (result or {}).get("data") or {}
    chunks = data.get("chunks") or []
    units = chapters_in_order([c.get("file_path", "") for c in chunks])
    meta = (result or {}).get("metadata") or {}
    return {
        "context_text": context,
        "units": units,
        "passages": [{"chunk_id": c.get("chunk_id"), "unit": c.get("file_path")} for c in chunks],
        "dropped_units": STATE["dropped"],
        "chapters_before_cap": STATE["before"],
        "status": (result or {}).get("status"),
        "records": {"entities": len(data.get("entities") or []),
                    "relationships": len(data.get("relationships") or []), "chunks": len(chunks)},
        "keywords": meta.get("keywords"),
        "timings": {"query_s": seconds},
    }


async def op_answer(p: dict[str, Any]) -> dict[str, Any]:
    """The package's own answer: the same query, answered with LightRAG's response prompt (the
    chunk cap applies as in retrieve)."""
    rag = STATE["rag"]
    STATE.update(max_units=p.get("max_units"), dropped=[], before=[])
    t0 = time.perf_counter()
    result = await rag.aquery_llm(p["question"], _param(only_need_context=False)) or {}
    llm = result.get("llm_response") or {}
    if llm.get("content") is None:
        raise RuntimeError(f"LightRAG returned no answer: {result.get('status')} {result.get('message')}")
    return {"answer": llm["content"], "prompt": "lightrag rag_response", "status": result.get("status"),
            "llm_generated": llm.get("llm_generated", True), "dropped_units": STATE["dropped"],
            "timings": {"query_s": round(time.perf_counter() - t0, 3)}}


async def op_close(p: dict[str, Any]) -> dict[str, Any]:
    rag = STATE.get("rag")
    if rag is not None:
        await rag.finalize_storages()
    return {}


if __name__ == "__main__":
    log("lightrag worker starting")
    serve({"open": op_open, "index": op_index, "load": op_load, "retrieve": op_retrieve, "answer": op_answer,
           "close": op_close})
