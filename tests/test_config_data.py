"""harness/config_data.py: config nodes read as plain dicts by typed code, unchanged, or refused
with the node's name; and the price tables' optional groups read as empty when a config lacks them."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from memeval.harness.config_data import as_dict, dict_or_none
from memeval.harness.estimate import _price_table, _throughput_table
from memeval.model_access.errors import ConfigError


def test_a_mapping_comes_back_as_to_container_makes_it() -> None:
    cfg = OmegaConf.create({"model": "m-1", "copy": "${model}", "7": {"n": 2}})
    assert as_dict(cfg, resolve=True) == {"model": "m-1", "copy": "m-1", "7": {"n": 2}}
    assert as_dict(cfg, resolve=False)["copy"] == "${model}"  # resolve is the caller's, as in OmegaConf
    assert as_dict({}, resolve=True) == {}  # a plain `{}` default reads as itself


def test_a_node_that_is_not_a_mapping_is_none_or_a_named_error() -> None:
    listed = OmegaConf.create(["a", "b"])
    assert dict_or_none(listed, resolve=True) is None
    assert dict_or_none(None, resolve=True) is None
    with pytest.raises(ConfigError, match=r"prices\.models must be a mapping, got ListConfig"):
        as_dict(listed, resolve=True, what="prices.models")


def test_price_tables_without_their_optional_groups_read_as_empty() -> None:
    """A price file without batch_discount or local_throughput (before, a ValueError from
    OmegaConf.to_container({}))."""
    cfg = OmegaConf.create({"prices": {"models": {"m": {"input": 1.0, "output": 2.0}}}})
    prices, batch = _price_table(cfg)
    assert set(prices) == {"m"} and batch == {}
    assert _throughput_table(cfg) == ("", {})
