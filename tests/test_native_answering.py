"""`answer_with: package`: a method may answer with its own prompt; the shared prompt stays the
default, and the run records which one answered (predictions, meta, table)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli, scripted_overrides
from omegaconf import OmegaConf

from memeval.datasets.types import ContextCap
from memeval.methods.base import Services
from memeval.methods.external.graphrag import GraphRAGMethod

TESTS = Path(__file__).parent
CONF = TESTS.parent / "conf" / "method"


def test_harness_records_a_methods_own_answer_and_skips_the_shared_call(scripted, tmp_path, data_dir) -> None:
    args = ["method=embedding_rag", "+method.answer_with=package", "method._target_=native_answer_double.SelfAnsweringRAG",
            "dataset=epbench20", "subset.n=2", *scripted_overrides(scripted, tmp_path, data_dir)]
    r = run_cli(args, env={"PYTHONPATH": str(TESTS)})
    assert r.returncode == 0, r.stderr[-3000:]
    (run,) = sorted((tmp_path / "runs" / "epbench20").glob("embedding_rag-*"))
    preds = [json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines()]
    assert all(p["answer"].startswith("own answer from") and p["answered_by"] == "method" for p in preds)
    assert all(p["native_answer"] == {"prompt": "double"} and "answer" not in p["usage"] for p in preds)
    assert not any("Material:" in json.dumps(q["body"]) for q in scripted.requests), "no shared answer call"
    assert json.loads((run / "meta.json").read_text())["answer_with"] == "package"
    assert "answer_with=package" in (run / "results.md").read_text()


def test_shared_prompt_is_the_default_everywhere() -> None:
    """The shared prompt unless the experiment says otherwise: the paper experiment has every
    package answer with its own prompt (its method configs read experiment.answer_with)."""
    from memeval.harness.estimate import compose

    for name in ("graphrag", "lightrag", "hipporag2"):
        assert OmegaConf.to_container(OmegaConf.load(CONF / f"{name}.yaml"))["answer_with"] == "${experiment.answer_with}"
        assert compose([f"method={name}"]).method.answer_with == "shared"
        assert compose([f"method={name}", "+experiment=fair"]).method.answer_with == "shared"
        assert compose([f"method={name}", "+experiment=paper"]).method.answer_with == "package"
    services = Services(llm=None, embedder=None, cap=ContextCap(max_units=3), store_root=Path("."))  # type: ignore[arg-type]
    assert GraphRAGMethod(services).answer_with == "shared"
    with pytest.raises(ValueError, match="answer_with must be one of"):
        GraphRAGMethod(services, answer_with="own")
