"""`+experiment=paper` composes the GSW paper's settings per method (conf/embedder/paper,
conf/llm_index/paper: selected by the method's name), `+experiment=fair` and the default keep one
setting for all; the run names its experiment and each deviation from the paper in its tables."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from omegaconf import OmegaConf

from memeval.evaluation.protocol import experiment_line, provenance_header
from memeval.evaluation.report.setup_lines import setup_lines
from memeval.harness.estimate import compose
from memeval.harness.experiment import deviations

ROOT = Path(__file__).resolve().parents[1]
# what the GSW paper ran (Section "Baselines", Tables 7-9), as conf/ names the models
PAPER = {"vanilla": ("voyage-3", None, "shared"), "embedding_rag": ("voyage-3", None, "shared"),
         "gsw": ("voyage-3", None, "shared"), "graphrag": ("text-embedding-3-small", None, "package"),
         "lightrag": ("text-embedding-3-small", None, "package"),
         "hipporag2": ("text-embedding-3-small", "gpt-4o-mini-2024-07-18", "package")}  # NV-Embed-v2: a deviation


@pytest.mark.parametrize("method", sorted(PAPER))
def test_paper_experiment_composes_each_methods_settings(method: str) -> None:
    cfg = compose(["+experiment=paper", f"method={method}", "dataset=epbench200"])
    embedder, indexer, answer_with = PAPER[method]
    assert cfg.embedder.model == embedder
    assert cfg.llm_index.model == (indexer or cfg.llm.model) == (indexer or "gpt-4o-2024-08-06")
    assert cfg.method.get("answer_with", "shared") == answer_with
    assert (cfg.experiment.name, cfg.dataset.protocol.pr_convention) == ("paper", "authors")
    assert (cfg.dataset.protocol.policy, cfg.dataset.protocol.judge_version) == ("harsh", 3)  # Table 2's rule
    assert cfg.subset.n is None and cfg.judge.model == "gpt-4o-2024-08-06"


@pytest.mark.parametrize("extra", [[], ["+experiment=fair"]])
def test_fair_experiment_keeps_one_setting_for_every_method(extra: list[str]) -> None:
    for method in PAPER:
        cfg = compose([*extra, f"method={method}", "dataset=epbench200"])
        assert cfg.experiment.name == "fair" and cfg.dataset.protocol.pr_convention == "defined_only"
        assert (cfg.dataset.protocol.policy, cfg.dataset.protocol.judge_version) == ("lenient", 2)
        assert cfg.method.get("answer_with", "shared") == "shared"
        assert OmegaConf.to_container(cfg.llm_index) == OmegaConf.to_container(cfg.llm)
        assert cfg.embedder.model == ("voyage-3" if extra else "all-minilm-l6-v2")


def test_a_command_line_choice_replaces_the_papers_per_method_setting() -> None:
    cfg = compose(["+experiment=paper", "method=hipporag2", "embedder=nv_embed_v2",
                   "embedder.base_url=http://127.0.0.1:9/v1", "llm_index=gpt4o"])
    assert cfg.embedder.model == "nvidia/NV-Embed-v2" and "model_revision" not in cfg.embedder
    assert cfg.llm_index.model == "gpt-4o-2024-08-06"


def _reference() -> dict:
    return OmegaConf.to_container(compose(["+experiment=paper"]).experiment.reference, resolve=True)


def _as_paper(method: str, **changes: object) -> dict:
    """A run's actual values that follow the paper's entry for `method` in every respect."""
    ref = _reference()
    own = ref["methods"][method]
    actual = {"answer_model": "gpt-4o-2024-08-06", "judge_model": "gpt-4o-2024-08-06", "subset": "all",
              "index_model": own.get("index_model", "gpt-4o-2024-08-06"), "embedder": own.get("embedder"),
              "answer_with": own.get("answer_with", "shared"),
              "query_model": own.get("query_model", "gpt-4o-2024-08-06"), "scoring": dict(ref["scoring"]),
              "settings": dict(own.get("settings") or {}), "output_guard": "none", "package_versions": {}}
    actual.update(changes)
    return actual


def test_deviations_name_what_the_run_could_not_follow() -> None:
    ref = _reference()
    paper = _as_paper("hipporag2", embedder="text-embedding-3-small",
                      package_versions={"hipporag": "2.0.0a4"})
    nv, version = deviations(ref, "hipporag2", paper)
    assert "text-embedding-3-small" in nv and "NV-Embed-v2" in nv
    assert version == "package hipporag==2.0.0a4 (the reference names no version)"
    local = {**_as_paper("gsw"), "answer_model": "qwen2.5-coder-0.5b-instruct",
             "index_model": "qwen2.5-coder-0.5b-instruct", "subset": "8 of 456 (stratified by bucket, seed 0)"}
    found = " | ".join(deviations(ref, "gsw", local))
    assert "answering model qwen2.5-coder-0.5b-instruct" in found and "indexing model" in found
    assert "questions 8 of 456" in found and "embedder" not in found  # GSW embeds with Voyage-3: as the paper
    assert deviations({}, "gsw", local) == []  # the fair experiment has no reference to depart from


def test_every_table_names_the_experiment_and_its_deviations() -> None:
    meta = {"answer_model": "gpt-4o-2024-08-06", "judge_model": "gpt-4o-2024-08-06", "index_model": "gpt-4o-mini",
            "experiment": {"name": "paper", "reference": "GSW", "deviations": ["embedder x, not the reference's y"]}}
    header = provenance_header(meta, "lenient")
    assert "experiment: **paper**" in header and "embedder x, not the reference's y" in header
    assert "indexing model: **gpt-4o-mini**" in header
    assert experiment_line({"experiment": {"name": "fair"}}).startswith("experiment: **fair**")
    assert experiment_line({}) is None  # a run made before experiments were recorded

    def run(label: str, name: str | None, index: str = "m", conv: str | None = None) -> SimpleNamespace:
        meta = {"answer_model": "m", "index_model": index, **({"experiment": {"name": name}} if name else {})}
        return SimpleNamespace(label=label, meta=meta, metrics={"pr_convention": conv} if conv else {})

    lines = setup_lines([run("gsw", "paper", conv="authors"), run("hipporag2", "paper", "mini", "authors")])
    assert lines[0].startswith("experiment: paper (no reference:") and "indexing model: hipporag2 mini" in lines[1]
    assert "authors" in lines[2] and "DIFFERS" not in " ".join(lines)
    mixed = setup_lines([run("a", "paper", conv="authors"), run("b", "fair", conv="defined_only")])
    assert sum("DIFFERS" in x for x in mixed) == 2  # experiment and P/R convention
    assert setup_lines([run("a", None), run("b", None)]) == []  # older runs: the report reads as before


def test_readme_lists_the_paper_experiments_settings() -> None:
    text = (ROOT / "README.md").read_text()
    section = text.split("### The paper experiment", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    ref = _reference()
    for method, settings in ref["methods"].items():
        row = next((line for line in section.splitlines() if re.match(rf"\|\s*{method}\b", line)), None)
        assert row is not None, method
        for value in (settings.get(k) for k in ("embedder", "index_model", "answer_with") if k in settings):
            assert str(value) in row or value in ("shared", "package"), (method, value)


def test_a_paper_run_records_its_experiment_convention_and_deviations(scripted, tmp_path, data_dir) -> None:
    """The paper experiment on the scripted server: every model differs from the paper's, and
    the run says so (meta, results.md); EpBench P/R under the authors' convention."""
    import json

    from conftest import run_cli, scripted_overrides

    r = run_cli(["+experiment=paper", "method=embedding_rag", "dataset=epbench20", "subset.n=4",
                 *scripted_overrides(scripted, tmp_path, data_dir)])
    assert r.returncode == 0, r.stderr[-3000:]
    (run,) = sorted((tmp_path / "runs" / "epbench20").glob("embedding_rag-*"))
    exp = json.loads((run / "meta.json").read_text())["experiment"]
    assert exp["name"] == "paper" and exp["reference"].startswith("GSW paper")
    found = " | ".join(exp["deviations"])
    for phrase in ("answering model scripted-llm", "judge scripted-judge", "embedder hashed-bow, not the reference's voyage-3",
                   "questions 4 of 456", "duplicate gold items removed, not the reference's kept"):
        assert phrase in found, (phrase, found)
    assert "scoring rule" not in found and "judge input" not in found  # harsh and the typed judge: as the paper
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["pr_convention"] == "authors"
    judged = [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()]
    assert {j["judge_prompt"] for j in judged} == {"epbench-judge-v3"}
    table = (run / "results.md").read_text()
    assert "experiment: **paper**" in table and "embedder hashed-bow" in table and "P/R authors" in table
    assert "scoring: **harsh, " in table and "reference: GSW paper" in table
