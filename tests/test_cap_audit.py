"""The cap audit: the harness finds which chapters' text sits verbatim in a context and counts
the tokens of sections a method cannot trace to chapters (GraphRAG, LightRAG), per prediction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli, scripted_overrides

from memeval.datasets.types import ContextCap, Corpus, Unit
from memeval.evaluation.runs.cap_audit import summarize
from memeval.harness.provenance import CapAudit
from memeval.methods.base import Services
from memeval.methods.external.graphrag import GraphRAGMethod
from memeval.methods.external.hipporag2 import HippoRAG2Method
from memeval.methods.external.lightrag import LightRAGMethod

CH = [
    "The glassblower of the harbour town shaped a green bottle while the gulls circled over the fish market at noon.",
    "Two cyclists repaired a broken chain beside the old mill and then rode north through the wet barley fields.",
    "A retired pilot taught the village children how to read the clouds from the top of the windy hill.",
]
CORPUS = Corpus("mini", tuple(Unit(str(i + 1), t, i, title=f"Chapter {i + 1}") for i, t in enumerate(CH)))


def test_chapters_found_verbatim_beyond_the_reported_ones() -> None:
    context = ("-----Entities-----\nid|entity|description\n0|PILOT|" + CH[2] + "\n"
               "-----Sources-----\nid|text\n1|" + CH[0])
    entities = context.split("-----Sources-----")[0]
    a = CapAudit().check(CORPUS, context, ["1"], {"uncapped_text": [entities]}, 100)
    assert a["verbatim_units"] == ["1", "3"] and a["verbatim_beyond_units"] == ["3"]
    assert a["uncapped_tokens"] > 20 and 0 < a["uncapped_share"] < 1


def test_a_shared_short_phrase_is_not_provenance() -> None:
    a = CapAudit().check(CORPUS, "They rode north through the wet barley.", [], {}, 10)
    assert a["verbatim_units"] == [] and a["uncapped_tokens"] is None


def test_declared_uncapped_text_must_be_in_the_context() -> None:
    with pytest.raises(RuntimeError, match="not in the context"):
        CapAudit().check(CORPUS, "some context", [], {"uncapped_text": ["other text"]}, 2)


def _method(cls):
    return cls(Services(llm=None, embedder=None, cap=ContextCap(max_units=3), store_root=Path(".")))  # type: ignore[arg-type]


def test_graphrag_and_lightrag_declare_their_uncapped_sections() -> None:
    g = ("-----Reports-----\nid|title|content\n0|Harbour|A report.\n\n-----Entities-----\nid|entity|description\n"
         "0|GLASSBLOWER|shapes bottles\n\n-----Relationships-----\nid|source|target\n0|A|B\n\n"
         "-----Sources-----\nid|text\n7|" + CH[0])
    parts = _method(GraphRAGMethod).uncapped_text(g)
    assert len(parts) == 3 and not any(CH[0] in p for p in parts) and "A report." in parts[0]
    lr = ("Knowledge Graph Data (Entity):\n\n```json\n{\"entity\": \"Pilot\"}\n```\n\n"
          "Knowledge Graph Data (Relationship):\n\n```json\n{\"src\": \"Pilot\"}\n```\n\n"
          "Document Chunks (Each entry has a reference_id):\n\n```json\n{\"content\": \"" + CH[2] + "\"}\n```\n\n"
          "Reference Document List (Each entry starts with a [reference_id]):\n\n```\n[1] 3\n```\n")
    parts = _method(LightRAGMethod).uncapped_text(lr)
    assert len(parts) == 2 and all(p.startswith("Knowledge Graph Data") for p in parts)
    assert _method(HippoRAG2Method).uncapped_text("### Chapter 3\n" + CH[2]) == []


def test_summary_counts_leaky_contexts() -> None:
    preds = [{"cap_audit": {"verbatim_units": ["1", "3"], "verbatim_beyond_units": ["3"], "uncapped_tokens": 40,
                            "uncapped_share": 0.4}},
             {"cap_audit": {"verbatim_units": ["1"], "verbatim_beyond_units": [], "uncapped_tokens": 0,
                            "uncapped_share": 0.0}}]
    s = summarize(preds)
    assert s["mean_uncapped_share"] == 0.2 and s["contexts_with_units_beyond_reported"] == 1


def test_every_prediction_carries_the_audit_and_the_table_shows_it(scripted, tmp_path, data_dir) -> None:
    r = run_cli(["method=embedding_rag", "dataset=epbench20", "subset.n=3",
                 *scripted_overrides(scripted, tmp_path, data_dir)])
    assert r.returncode == 0, r.stderr[-3000:]
    (run,) = sorted((tmp_path / "runs" / "epbench20").glob("embedding_rag-*"))
    for line in (run / "predictions.jsonl").read_text().splitlines():
        p = json.loads(line)
        assert p["cap_audit"]["verbatim_units"] == sorted(p["context_chapters"], key=int)
        assert p["cap_audit"]["verbatim_beyond_units"] == []
    assert "cap audit: " in (run / "results.md").read_text()
    assert json.loads((run / "metrics.json").read_text())["cap_audit"]["n"] == 3


def test_a_sentence_shared_by_two_chapters_proves_nothing() -> None:
    stock = "As the evening settled over the square the crowd slowly drifted home talking about the day."
    corpus = Corpus("stock", (Unit("1", CH[0] + " " + stock, 0), Unit("2", CH[1] + " " + stock, 1)))
    a = CapAudit().check(corpus, CH[0] + " " + stock, ["1"], {}, 40)
    assert a["verbatim_units"] == ["1"] and a["verbatim_beyond_units"] == []
