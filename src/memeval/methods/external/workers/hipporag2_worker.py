"""HippoRAG 2 (hipporag 2.0.0a4) worker: passages = chapters, then `retrieve` per question.

Runs inside the hipporag2 environment (standard library + that env only). HippoRAG does no
chunking, so each chapter (its heading line, then its text) is one passage. `retrieve` returns
exactly the passages HippoRAG's QA step would read; the worker keeps the top min(qa_top_k, cap)
in HippoRAG's ranking, so the context cap holds by construction.

HippoRAG 2 answers from its graph only when its recognition memory (an LLM filter over the
question's nearest facts) keeps a fact; otherwise it falls back to dense passage retrieval, and a
failed filter call is caught and printed, so it falls back too. The worker records per question
how many facts the filter saw and kept and names the fallback (health's `fallback` check counts
them), and raises on a failed filter call instead of letting it pass as "no fact".

On a small graph the package's graph search can fail its own weight check: fact scores are
min-max normalised, so the least similar fact scores 0, and when the filter keeps it, a phrase
found only in that fact gets weight 0 while the linking map still counts it (the assertion in
`get_top_k_weights`; measured on a 4-fact LongMemEval haystack built by the 0.5B). The worker
answers that question from the package's dense passage retrieval, as the package does when no
fact is kept, names this fallback, and records how many kept facts scored 0.
"""

from __future__ import annotations

import time
from typing import Any

from _serve import log, serve

STATE: dict[str, Any] = {}


def _passage(u: dict[str, Any]) -> str:
    return f"### {u['title']}\n{u['text']}"


def op_open(p: dict[str, Any]) -> dict[str, Any]:
    from importlib.metadata import version

    from hipporag import HippoRAG
    from hipporag.utils.config_utils import BaseConfig

    s, llm, emb = p["settings"], p["llm"], p["embedding"]
    config = BaseConfig(
        save_dir=p["index_dir"],
        llm_name=llm["model"], llm_base_url=llm["base_url"],
        embedding_model_name=emb["model"], embedding_base_url=emb["base_url"],
        qa_top_k=int(s["qa_top_k"]), linking_top_k=int(s["linking_top_k"]),
        retrieval_top_k=int(s["retrieval_top_k"]),
        openie_mode="online", force_index_from_scratch=False, force_openie_from_scratch=False,
    )
    if s.get("max_new_tokens") is not None:
        config.max_new_tokens = int(s["max_new_tokens"])
    rag = HippoRAG(global_config=config)
    _watch_recognition(rag)
    STATE.update(rag=rag, settings=s, config=config)
    return {"hipporag": version("hipporag"), "qa_top_k": config.qa_top_k,
            "linking_top_k": config.linking_top_k, "retrieval_top_k": config.retrieval_top_k,
            "max_new_tokens": config.max_new_tokens, "embedding_class": type(rag.embedding_model).__name__}


def _watch_recognition(rag: Any) -> None:
    """Keep the last recognition-memory log and any exception of its filter call (both swallowed
    inside the package) in STATE, for `_retrieve`."""
    filt, facts = rag.rerank_filter, rag.rerank_facts
    call = filt.llm_call

    def llm_call(*a: Any, **kw: Any) -> Any:
        try:
            return call(*a, **kw)
        except Exception as exc:
            STATE["recognition_error"] = f"{type(exc).__name__}: {exc}"
            raise

    def rerank_facts(*a: Any, **kw: Any) -> Any:
        out = facts(*a, **kw)
        STATE["recognition_log"] = out[2]
        return out

    filt.llm_call = llm_call
    rag.rerank_facts = rerank_facts
    _watch_graph_search(rag)


def _watch_graph_search(rag: Any) -> None:
    """Catch the package's weight-check failure in its graph search (module docstring) and
    return its dense passage ranking instead, noting why in STATE for `_retrieve`."""
    search = rag.graph_search_with_fact_entities

    def graph_search(*a: Any, **kw: Any) -> Any:
        try:
            return search(*a, **kw)
        except AssertionError as exc:
            if not _raised_in(exc, "get_top_k_weights"):
                raise
            scores, kept = kw.get("query_fact_scores"), kw.get("top_k_fact_indices") or []
            STATE["kept_zero_scored"] = sum(1 for i in kept if scores is not None and float(scores[i]) == 0.0)
            STATE["graph_search_error"] = ("dense passage retrieval (HippoRAG 2's graph search failed its weight "
                                           "check: a kept fact scored 0 after min-max normalisation)")
            return rag.dense_passage_retrieval(kw.get("query", a[0] if a else None))

    rag.graph_search_with_fact_entities = graph_search


def _raised_in(exc: BaseException, function: str) -> bool:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_name == function


def _retrieve(rag: Any, question: str, k: int) -> tuple[Any, dict[str, Any]]:
    """One HippoRAG retrieval and what its recognition memory did: (solution, fields for the reply)."""
    for key in ("recognition_error", "recognition_log", "graph_search_error", "kept_zero_scored"):
        STATE.pop(key, None)
    solution = rag.retrieve(queries=[question], num_to_retrieve=k)[0]
    log_ = STATE.pop("recognition_log", None) or {}
    error = STATE.pop("recognition_error", None) or log_.get("error")
    if error:
        raise RuntimeError(f"HippoRAG 2's recognition-memory call failed ({error}); the package would have "
                           "answered from dense passage retrieval as if no fact matched. Rerun to resume.")
    before, kept = len(log_.get("facts_before_rerank") or []), len(log_.get("facts_after_rerank") or [])
    recognition = {"facts_before": before, "facts_kept": kept}
    fallback = STATE.pop("graph_search_error", None)
    if fallback:
        recognition["kept_zero_scored"] = STATE.pop("kept_zero_scored", 0)
    elif not kept:
        fallback = "dense passage retrieval (recognition memory kept no fact)"
    return solution, {"recognition": recognition, "fallback": fallback}


def _map(units: list[dict[str, Any]]) -> list[str]:
    docs = [_passage(u) for u in units]
    STATE["doc_to_unit"] = {d: u["id"] for d, u in zip(docs, units, strict=True)}
    return docs


def op_index(p: dict[str, Any]) -> dict[str, Any]:
    rag = STATE["rag"]
    docs = _map(p["units"])
    t0 = time.perf_counter()
    rag.index(docs=docs)
    info = rag.get_graph_info()
    return {"seconds": round(time.perf_counter() - t0, 2), "passages": len(docs),
            "graph": {k: int(v) for k, v in info.items() if isinstance(v, int | float)}}


def op_load(p: dict[str, Any]) -> dict[str, Any]:
    rag = STATE["rag"]
    _map(p["units"])
    stored = set(rag.chunk_embedding_store.get_all_texts()) if hasattr(
        rag.chunk_embedding_store, "get_all_texts") else None
    missing = [d for d in STATE["doc_to_unit"] if stored is not None and d not in stored]
    if missing:
        raise RuntimeError(f"HippoRAG index lacks {len(missing)} of the corpus passages; rebuild it")
    return {"passages": len(STATE["doc_to_unit"])}


def op_retrieve(p: dict[str, Any]) -> dict[str, Any]:
    rag, s = STATE["rag"], STATE["settings"]
    k = int(s["qa_top_k"])
    if p.get("max_units") is not None:
        k = min(k, int(p["max_units"]))
    before = {"ppr": rag.ppr_time, "rerank": rag.rerank_time, "all": rag.all_retrieval_time}
    t0 = time.perf_counter()
    solution, recognition = _retrieve(rag, p["question"], k)
    seconds = round(time.perf_counter() - t0, 3)
    docs = list(solution.docs)[:k]
    scores = [float(x) for x in list(solution.doc_scores)[:k]]
    mapping = STATE["doc_to_unit"]
    unknown = [d[:60] for d in docs if d not in mapping]
    if unknown:
        raise RuntimeError(f"HippoRAG returned passages that are not corpus chapters: {unknown}")
    units = [mapping[d] for d in docs]
    return {
        "context_text": "\n\n".join(docs),
        "units": units,
        "passages": [{"unit": u, "score": round(sc, 6)} for u, sc in zip(units, scores, strict=False)],
        "dropped_units": [],
        "k": k,
        **recognition,
        "timings": {"retrieve_s": seconds, "ppr_s": round(rag.ppr_time - before["ppr"], 3),
                    "rerank_s": round(rag.rerank_time - before["rerank"], 3)},
    }


def op_answer(p: dict[str, Any]) -> dict[str, Any]:
    """The package's own answer: HippoRAG 2's QA prompt over the same top-k passages as retrieve."""
    rag, s = STATE["rag"], STATE["settings"]
    k = int(s["qa_top_k"])
    if p.get("max_units") is not None:
        k = min(k, int(p["max_units"]))
    t0 = time.perf_counter()
    solution, recognition = _retrieve(rag, p["question"], k)
    solution.docs = list(solution.docs)[:k]
    solution.doc_scores = solution.doc_scores[:k]
    solutions, responses, _meta = rag.qa([solution])
    mapping = STATE["doc_to_unit"]
    return {"answer": solutions[0].answer, "raw_response": responses[0], "prompt": "hipporag rag_qa",
            "context_text": "\n\n".join(solution.docs), "units": [mapping.get(d) for d in solution.docs],
            **recognition, "timings": {"answer_s": round(time.perf_counter() - t0, 3)}}


if __name__ == "__main__":
    log("hipporag2 worker starting")
    serve({"open": op_open, "index": op_index, "load": op_load, "retrieve": op_retrieve, "answer": op_answer})
