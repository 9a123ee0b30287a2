"""subset.extra: more questions in the strata where a paired difference varies most, on top of
subset.n's even spread, with the n-question set kept inside (its answers are reused) and the
run's label and folder saying so. On the real EpBench-20 questions."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf
from test_subset_named import _cfg

from memeval.datasets.subset import filtered_pool, stratified_subset
from memeval.harness.build import _subset_label, identity
from memeval.model_access.errors import ConfigError


def _pool(data_dir: Path):  # noqa: ANN202
    cfg = _cfg(data_dir, "dataset=epbench20")
    dataset = instantiate(cfg.dataset.loader).load()
    return dataset, filtered_pool(dataset, OmegaConf.to_container(cfg.subset, resolve=True))[0]


def _buckets(questions, key: str) -> Counter:  # noqa: ANN001
    return Counter(str(q.attrs.get(key)) for q in questions)


def test_extra_grows_one_stratum_and_keeps_the_smaller_draw_inside(data_dir: Path) -> None:
    dataset, pool = _pool(data_dir)
    key = dataset.strata_key
    base = stratified_subset(pool, 200, key)
    grown = stratified_subset(pool, 200, key, extra={"1": 40})
    assert {q.id for q in base} < {q.id for q in grown}
    added = [q for q in grown if q.id not in {b.id for b in base}]
    assert len(added) == 40 and _buckets(added, key) == Counter({"1": 40})
    before, after = _buckets(base, key), _buckets(grown, key)
    assert after["1"] == before["1"] + 40 and all(after[b] == before[b] for b in before if b != "1")
    # the same seed draws the same questions; another seed other ones
    assert [q.id for q in grown] == [q.id for q in stratified_subset(pool, 200, key, extra={"1": 40})]
    assert {q.id for q in grown} != {q.id for q in stratified_subset(pool, 200, key, seed=1, extra={"1": 40})}
    # dataset order is kept
    order = {q.id: i for i, q in enumerate(pool)}
    assert [order[q.id] for q in grown] == sorted(order[q.id] for q in grown)


@pytest.mark.parametrize(("n", "ids", "extra", "message"), [
    (200, None, {"7": 5}, "which no question has; the values of"),
    (200, None, {"1": 10_000}, "0 to"),
    (200, None, {"1": -1}, "0 to"),
    (None, None, {"1": 5}, "subset.n=null already takes every question"),
    (None, ["x"], {"1": 5}, "cannot be combined with subset.ids"),
])
def test_bad_extra_names_the_problem(data_dir: Path, n, ids, extra, message) -> None:  # noqa: ANN001
    dataset, pool = _pool(data_dir)
    with pytest.raises(ValueError, match=message):
        stratified_subset(pool, n, dataset.strata_key, ids=ids, extra=extra)


def test_extra_from_the_command_line_labels_the_run_and_names_its_folder(data_dir: Path) -> None:
    cfg = _cfg(data_dir, "dataset=epbench20", "subset.n=200", "subset.extra={1:40}")
    dataset = instantiate(cfg.dataset.loader).load()
    pool, filters = filtered_pool(dataset, OmegaConf.to_container(cfg.subset, resolve=True))
    questions = stratified_subset(pool, 200, dataset.strata_key, extra={"1": 40})
    label = _subset_label(cfg, dataset, questions, pool, filters)
    assert label.startswith("240 of ") and "40 more in 1" in label
    plain = _cfg(data_dir, "dataset=epbench20", "subset.n=200")
    assert identity(cfg) != identity(plain)
    assert "extra" not in identity(plain)["subset"]  # runs made before the key keep their folder names


def test_bad_extra_is_a_config_error_before_any_call(data_dir: Path) -> None:
    from memeval.harness.build import build

    cfg = _cfg(data_dir, "dataset=epbench20", "subset.n=200", "subset.extra={9:3}")
    with pytest.raises(ConfigError, match="subset.extra names stratum '9'"):
        build(cfg, check=False)


def test_extra_that_is_not_a_mapping_is_a_config_error(data_dir: Path) -> None:
    from memeval.harness.build import build

    cfg = _cfg(data_dir, "dataset=epbench20", "subset.n=200", "subset.extra=40")
    with pytest.raises(ConfigError, match="must map strata to counts"):
        build(cfg, check=False)
