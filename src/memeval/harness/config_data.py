"""Config nodes as plain dicts, typed once for the runner and the commands.

`OmegaConf.to_container` returns a union (dict, list, str, None) whose dict keys are typed as any
`DictKeyType`, so every caller reading a mapping would repeat the same narrowing. These do it in
one place: a mapping comes back as `to_container` made it (no key or value is converted, so what is
hashed, compared or written stays byte for byte); anything else is None, or a ConfigError naming it.
"""

from __future__ import annotations

from typing import Any, cast

from omegaconf import OmegaConf

from memeval.model_access.errors import ConfigError


def dict_or_none(node: Any, *, resolve: bool) -> dict[str, Any] | None:
    """`node` (a config node, or a plain dict such as a `{}` default) as a plain dict; None when
    it is not a mapping. `resolve` as in `OmegaConf.to_container` (whose default is False)."""
    data = OmegaConf.to_container(node, resolve=resolve) if OmegaConf.is_config(node) else node
    if not isinstance(data, dict):
        return None
    # YAML and Hydra mappings have string keys; OmegaConf's stubs type them as any DictKeyType.
    # The keys are passed on unchanged (not str()-ed), so nothing downstream reads a different dict.
    return cast(dict[str, Any], data)


def as_dict(node: Any, *, resolve: bool, what: str = "config node") -> dict[str, Any]:
    """`node` as a plain dict (`dict_or_none`); a ConfigError naming `what` when it is not a mapping."""
    data = dict_or_none(node, resolve=resolve)
    if data is None:
        raise ConfigError(f"{what} must be a mapping, got {type(node).__name__}: {repr(node)[:200]}")
    return data
