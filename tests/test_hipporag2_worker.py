"""The HippoRAG 2 worker's retrieve (no package environment needed: a stand-in with hipporag
2.0.0a4's control flow, where `rerank_facts` and its filter catch every exception and a question
whose recognition memory keeps no fact is answered by dense passage retrieval). A failed filter
call must stop the run; a filter that keeps nothing must be named as the fallback it causes."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from methods.external import envs

sys.path.insert(0, str(Path(envs.__file__).parent / "workers"))
import hipporag2_worker  # noqa: E402

FACTS = [("Ada Quill", "juggled at", "Harbor Hall"), ("Ada Quill", "visited", "Mill Street")]
GRAPH_DOC, DENSE_DOC = "### Chapter 2\nAda juggled.", "### Chapter 1\nRain fell."


class _Filter:
    def __init__(self, reply: Any) -> None:
        self.reply = reply

    def llm_call(self, question: str, facts: str) -> Any:
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply

    def __call__(self, query: str, items: list[tuple], indices: list[int], len_after_rerank: int) -> Any:
        try:  # as the package: any exception is printed and means "no fact"
            kept = self.llm_call(query, str(items))
        except Exception:  # noqa: BLE001
            kept = []
        return indices[:len(kept)], items[:len(kept)], {"confidence": None}


class _Rag:
    def __init__(self, reply: Any) -> None:
        self.rerank_filter = _Filter(reply)

    def rerank_facts(self, query: str) -> Any:
        try:
            idx, kept, _ = self.rerank_filter(query, FACTS, [0, 1], len_after_rerank=5)
            return idx, kept, {"facts_before_rerank": FACTS, "facts_after_rerank": kept}
        except Exception as exc:  # noqa: BLE001
            return [], [], {"facts_before_rerank": [], "facts_after_rerank": [], "error": str(exc)}

    def retrieve(self, queries: list[str], num_to_retrieve: int) -> list[Any]:
        _, kept, _ = self.rerank_facts(queries[0])
        docs = [GRAPH_DOC] if kept else [DENSE_DOC]
        return [SimpleNamespace(docs=docs, doc_scores=[0.5])]


def _retrieve(reply: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    rag = _Rag(reply)
    hipporag2_worker._watch_recognition(rag)
    for key, value in {"rag": rag, "settings": {"qa_top_k": 17},
                       "doc_to_unit": {GRAPH_DOC: "2", DENSE_DOC: "1"}}.items():
        monkeypatch.setitem(hipporag2_worker.STATE, key, value)
    rag.ppr_time = rag.rerank_time = rag.all_retrieval_time = 0.0
    return hipporag2_worker.op_retrieve({"question": "Where did Ada juggle?", "max_units": 3})


def test_a_failed_filter_call_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RuntimeError, match="recognition-memory call failed .*APIConnectionError"):
        _retrieve(ConnectionError("APIConnectionError: server closed the connection"), monkeypatch)


def test_a_filter_that_keeps_no_fact_names_the_dense_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    out = _retrieve([], monkeypatch)
    assert out["units"] == ["1"] and out["recognition"] == {"facts_before": 2, "facts_kept": 0}
    assert out["fallback"].startswith("dense passage retrieval")


def test_a_kept_fact_is_the_graph_path(monkeypatch: pytest.MonkeyPatch) -> None:
    out = _retrieve([list(FACTS[0])], monkeypatch)
    assert out["units"] == ["2"] and out["recognition"]["facts_kept"] == 1 and out["fallback"] is None
