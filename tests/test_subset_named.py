"""Named question subsets (Table 13 of the GSW paper) and the gold-unit bound, from the command
line through the composed config, on the real EpBench data."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from harness.build import _filtered, identity
from harness.resolvers import register_resolvers
from harness.schema import register_schemas
from harness.subset import stratified_subset
from model_access.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def _cfg(data_dir: Path, *overrides: str):  # noqa: ANN202
    register_resolvers()
    register_schemas()
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose(config_name="config", overrides=[f"data_dir={data_dir}", *overrides])


def test_table13_subset_is_the_papers_548_questions(data_dir: Path) -> None:
    cfg = _cfg(data_dir, "dataset=epbench200", "subset.name=table13", "subset.n=null")
    dataset = instantiate(cfg.dataset.loader).load()
    pool, labels = _filtered(cfg, dataset)
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
    with pytest.raises(ConfigError, match="known: table13"):
        _filtered(cfg, dataset)


def test_within_units_keeps_questions_answerable_from_the_first_chapters(data_dir: Path) -> None:
    cfg = _cfg(data_dir, "dataset=epbench20", "subset.within_units=3")
    dataset = instantiate(cfg.dataset.loader).load()
    pool, labels = _filtered(cfg, dataset)
    first = {u.id for u in next(iter(dataset.corpora.values())).units[:3]}
    assert 0 < len(pool) < len(dataset.questions) and labels == ["gold units within the first 3"]
    assert all(set(q.gold_units) <= first for q in pool)
    assert any(q.gold_units for q in pool)
    # unset filters do not change the identity (run folder names) of earlier runs
    assert "name" not in identity(_cfg(data_dir, "dataset=epbench20"))["subset"]
