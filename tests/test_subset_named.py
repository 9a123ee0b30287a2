"""Named question subsets (Table 13 of the GSW paper) and the gold-unit bound, from the command
line through the composed config, on the real EpBench data."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from omegaconf import OmegaConf

from memeval.datasets.subset import filtered_pool, stratified_subset
from memeval.harness.build import identity
from memeval.harness.resolvers import register_resolvers
from memeval.harness.schema import register_schemas

ROOT = Path(__file__).resolve().parents[1]


def _cfg(data_dir: Path, *overrides: str):  # noqa: ANN202
    register_resolvers()
    register_schemas()
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose(config_name="config", overrides=[f"data_dir={data_dir}", *overrides])


def test_table13_subset_is_the_papers_548_questions(data_dir: Path) -> None:
    cfg = _cfg(data_dir, "dataset=epbench200", "subset.name=table13", "subset.n=null")
    dataset = instantiate(cfg.dataset.loader).load()
    pool, labels = filtered_pool(dataset, OmegaConf.to_container(cfg.subset, resolve=True))
    assert len(dataset.questions) == 686 and len(pool) == 548
    assert all(q.attrs["get"] == "all" for q in pool) and "table13" in labels[0]
    buckets: dict[str, int] = {}
    for q in pool:
        b = str(q.attrs.get(dataset.strata_key))
        buckets[b] = buckets.get(b, 0) + 1
    assert sorted(buckets.values()) == sorted([150, 150, 90, 98, 60])
    assert identity(cfg)["subset"]["name"] == "table13"
    # subset.n samples within the named subset
    assert all(q.attrs["get"] == "all" for q in stratified_subset(pool, 10, dataset.strata_key))


def test_unknown_subset_name_is_a_config_error(data_dir: Path) -> None:
    cfg = _cfg(data_dir, "dataset=epbench20", "subset.name=tabel13")
    dataset = instantiate(cfg.dataset.loader).load()
    with pytest.raises(ValueError, match="known: table13"):
        filtered_pool(dataset, OmegaConf.to_container(cfg.subset, resolve=True))


def test_within_units_keeps_questions_answerable_from_the_first_chapters(data_dir: Path) -> None:
    cfg = _cfg(data_dir, "dataset=epbench20", "subset.within_units=3")
    dataset = instantiate(cfg.dataset.loader).load()
    pool, labels = filtered_pool(dataset, OmegaConf.to_container(cfg.subset, resolve=True))
    first = {u.id for u in next(iter(dataset.corpora.values())).units[:3]}
    assert 0 < len(pool) < len(dataset.questions) and labels == ["gold units within the first 3"]
    assert all(set(q.gold_units) <= first for q in pool)
    assert any(q.gold_units for q in pool)
    # unset filters do not change the identity (run folder names) of earlier runs
    assert "name" not in identity(_cfg(data_dir, "dataset=epbench20"))["subset"]


def test_index_units_cuts_every_corpus_and_keeps_only_questions_within(data_dir: Path, scripted, tmp_path: Path) -> None:  # noqa: ANN001
    """subset.index_units=N: every method indexes N units, is asked only about them, and its
    index folder is not the full corpus' (a 3-chapter index must never answer for 19)."""
    import json

    from conftest import run_cli, scripted_overrides

    base = [*scripted_overrides(scripted, tmp_path, data_dir), "method=embedding_rag", "dataset=epbench20",
            "subset.n=4"]
    cut = run_cli([*base, "subset.index_units=3"])
    assert cut.returncode == 0, cut.stderr[-2000:]
    full = run_cli(base)
    assert full.returncode == 0, full.stderr[-2000:]
    runs = {p.parent.name: p.parent for p in (tmp_path / "runs" / "epbench20").glob("*/index.json")}
    assert len(runs) == 2
    info = {n: json.loads((r / "index.json").read_text()) for n, r in runs.items()}
    units = sorted(i["corpora"][0]["units"] for i in info.values())
    assert units == [3, 19]
    assert len({i["index_folder"] for i in info.values()}) == 2
    cut_run = next(r for n, r in runs.items() if info[n]["corpora"][0]["units"] == 3)
    cfg = _cfg(data_dir, "dataset=epbench20")
    dataset = instantiate(cfg.dataset.loader).load()
    first = {u.id for u in next(iter(dataset.corpora.values())).units[:3]}
    asked = [json.loads(line) for line in (cut_run / "predictions.jsonl").read_text().splitlines()]
    gold = {q.id: set(q.gold_units) for q in dataset.questions}
    assert asked and all(gold[p["question_id"]] <= first for p in asked)
    assert "first 3 units" in (cut_run / "meta.json").read_text()
