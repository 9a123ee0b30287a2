"""The LightRAG worker's retrieve (no package environment needed: the query is a stand-in shaped as
lightrag-hku 1.5.7's `aquery_llm` returns it). A query that failed inside the package must stop
the run, not be answered as an empty context; LightRAG's "nothing found" stays a result."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from memeval.methods.external import envs

sys.path.insert(0, str(Path(envs.__file__).parent / "workers"))
import lightrag_worker  # noqa: E402

NO_CONTEXT = "Sorry, I'm not able to provide an answer to that question.[no-context]"


class _Rag:
    """A LightRAG stand-in whose query returns one stored result."""

    def __init__(self, result: dict[str, Any]) -> None:
        self.result = result

    async def aquery_llm(self, question: str, param: Any) -> dict[str, Any]:
        return self.result


def _retrieve(result: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setitem(lightrag_worker.STATE, "rag", _Rag(result))
    monkeypatch.setattr(lightrag_worker, "_param", lambda only_need_context: None)  # needs the package
    return asyncio.run(lightrag_worker.op_retrieve({"question": "Where did the juggler perform?", "max_units": 3}))


def test_a_query_that_raised_inside_the_package_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # the shape of q13-263 in the 2026-12-05 EpBench run: the keyword call passed LightRAG's
    # worker timeout on a loaded machine, and the run answered from the empty context
    crashed = {"status": "failure", "message": "Query failed: Worker execution timeout after 480s",
               "data": {}, "metadata": {}, "llm_response": {"content": None}}
    with pytest.raises(RuntimeError, match="query failed after .* Worker execution timeout"):
        _retrieve(crashed, monkeypatch)


def test_nothing_found_is_a_result_with_the_no_context_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    nothing = {"status": "failure", "message": "Query returned no results", "data": {},
               "metadata": {"failure_reason": "no_results", "mode": "hybrid"},
               "llm_response": {"content": NO_CONTEXT}}
    out = _retrieve(nothing, monkeypatch)
    assert out["context_text"] == NO_CONTEXT and out["units"] == [] and out["status"] == "failure"


def test_a_found_context_passes_with_its_chapters(monkeypatch: pytest.MonkeyPatch) -> None:
    found = {"status": "success", "data": {"chunks": [{"chunk_id": "c1", "file_path": "2"}], "entities": [{}]},
             "metadata": {"keywords": {"high_level": ["juggler"]}},
             "llm_response": {"content": "Document Chunks: Rain fell all day."}}
    out = _retrieve(found, monkeypatch)
    assert out["units"] == ["2"] and out["records"] == {"entities": 1, "relationships": 0, "chunks": 1}
