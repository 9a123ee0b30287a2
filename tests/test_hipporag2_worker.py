"""The HippoRAG 2 worker's retrieve (no package environment needed: a stand-in with hipporag
2.0.0a4's control flow, where `rerank_facts` and its filter catch every exception and a question
whose recognition memory keeps no fact is answered by dense passage retrieval). A failed filter
call must stop the run; a filter that keeps nothing must be named as the fallback it causes; so must
the package's failed weight check when the filter keeps a fact that min-max scoring put at 0."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from memeval.methods.external import envs

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
        scores = np.array([1.0, 0.0])  # min-max normalised, as the package's fact scores
        idx, kept, _ = self.rerank_facts(queries[0])
        if kept:
            ids, _ = self.graph_search_with_fact_entities(query=queries[0], link_top_k=5, query_fact_scores=scores,
                                                          top_k_facts=kept, top_k_fact_indices=idx)
        else:
            ids, _ = self.dense_passage_retrieval(queries[0])
        return [SimpleNamespace(docs=[[DENSE_DOC, GRAPH_DOC][i] for i in ids], doc_scores=[0.5])]

    def dense_passage_retrieval(self, query: str) -> tuple[list[int], list[float]]:
        return [0], [0.9]

    def graph_search_with_fact_entities(self, query: str, link_top_k: int, query_fact_scores: Any,
                                        top_k_facts: list[tuple], top_k_fact_indices: list[int]) -> Any:
        """The package's phrase weighting: a phrase's weight is its facts' scores, and the linking
        map counts every phrase of a kept fact, so a phrase only in a 0-scored fact breaks the check."""
        weights: dict[str, float] = {}
        for i, fact in zip(top_k_fact_indices, top_k_facts, strict=True):
            for phrase in (fact[0], fact[2]):
                weights[phrase] = weights.get(phrase, 0.0) + float(query_fact_scores[i])
        self.get_top_k_weights(np.array(list(weights.values())), dict(weights))
        return [1], [0.7]

    def get_top_k_weights(self, all_phrase_weights: Any, linking_score_map: dict[str, float]) -> None:
        assert np.count_nonzero(all_phrase_weights) == len(linking_score_map)


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


def test_a_kept_fact_scored_zero_answers_from_dense_retrieval_and_names_why(monkeypatch: pytest.MonkeyPatch) -> None:
    out = _retrieve([list(FACTS[0]), list(FACTS[1])], monkeypatch)  # keeps the fact scored 0
    assert out["units"] == ["1"]
    assert out["fallback"].startswith("dense passage retrieval (HippoRAG 2's graph search failed its weight check")
    assert out["recognition"] == {"facts_before": 2, "facts_kept": 2, "kept_zero_scored": 1}


def test_another_assertion_in_the_graph_search_is_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*a: Any, **kw: Any) -> Any:
        raise AssertionError("No phrases found in the graph")

    monkeypatch.setattr(_Rag, "graph_search_with_fact_entities", broken)
    with pytest.raises(AssertionError, match="No phrases"):
        _retrieve([list(FACTS[0])], monkeypatch)
