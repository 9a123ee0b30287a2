"""Hydra options for plugins that ship no conf/ file: `memeval run method=bm25` with nothing but
an installed package.

A method or dataset registered by another distribution's entry point (memeval.plugins) and
without a conf/<group>/<name>.yaml becomes a ConfigStore node of the group, built from its class:
- a method: `_target_` (the class), `name` and every constructor parameter with its default
  (`???` when it has none), as `harness.plugin.accepted_params` reads them;
- a dataset (the entry point names its loader class): `name`, `loader` (the class and its
  parameters) and `protocol` (the class the loader's `protocol` attribute names: a registered
  protocol plugin or a dotted class path, with its parameters);
then overlaid by the YAML the class declares (`config_file = "bm25.yaml"`, beside its module), so a
plugin's own config can document, retune or interpolate (`data_dir: ${data_dir}`) any of them.
A file in conf/ always wins; memeval's own plugins (conf/ has theirs) are never generated.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from memeval import plugins

from .plugin import constructor_params

GROUPS = ("method", "dataset")  # the Hydra groups a plugin kind of the same name fills
SCALARS = (str, int, float, bool, type(None))


def _config_value(value: Any) -> tuple[bool, Any]:
    """(usable, value): a default a YAML config can hold (tuples become lists)."""
    if isinstance(value, SCALARS):
        return True, value
    if isinstance(value, list | tuple):
        items = [_config_value(v) for v in value]
        return all(ok for ok, _ in items), [v for _, v in items]
    if isinstance(value, dict):
        pairs = {str(k): _config_value(v) for k, v in value.items()}
        return all(ok for ok, _ in pairs.values()), {k: v for k, (_, v) in pairs.items()}
    return False, None


def param_defaults(cls: type) -> dict[str, Any]:
    """Constructor parameter -> default (`???`: required), as `constructor_params` finds them; a
    default no config can hold (an object) is left to the class."""
    found: dict[str, Any] = {}
    for p in constructor_params(cls)[0]:
        ok, value = (True, "???") if p.default is p.empty else _config_value(p.default)
        if ok:
            found[p.name] = value
    return found


def declared_yaml(cls: type) -> dict[str, Any]:
    """The config the class ships (`config_file`, relative to its module's folder), or {}."""
    import yaml

    name = getattr(cls, "config_file", None)
    module_file = getattr(sys.modules.get(cls.__module__), "__file__", None)
    if not name or not module_file:
        return {}
    path = Path(module_file).resolve().parent / str(name)
    if not path.is_file():
        raise plugins.PluginError(f"{cls.__module__}.{cls.__qualname__} declares config_file {name!r}, "
                                  f"but {path} does not exist")
    node = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(node, dict):
        raise plugins.PluginError(f"{path}: a plugin's config must be a mapping")
    return node


def _protocol_path(cls: type) -> str | None:
    named = getattr(cls, "protocol", None)
    if not isinstance(named, str) or not named:
        return None
    return named if "." in named else plugins.plugin("protocol", named).class_path


def _class_node(target: str) -> dict[str, Any]:
    from hydra.utils import get_class

    return {"_target_": target, **param_defaults(get_class(target))}


def plugin_node(p: plugins.Plugin) -> dict[str, Any]:
    """The config a plugin without a conf/ file runs under (see the module docstring)."""
    from omegaconf import OmegaConf

    from .config_data import as_dict

    cls = p.load()
    if p.kind == "method":
        node: dict[str, Any] = {"_target_": p.class_path, "name": p.name}
        node.update({k: v for k, v in param_defaults(cls).items() if k != "name"})
    else:
        node = {"name": p.name, "loader": _class_node(p.class_path)}
        protocol = _protocol_path(cls)
        if protocol:
            node["protocol"] = _class_node(protocol)
    merged = OmegaConf.merge(OmegaConf.create(node), OmegaConf.create(declared_yaml(cls)))
    return as_dict(merged, resolve=False, what=f"{p.name}'s config")


def plugin_options(config_dir: Path, group: str) -> dict[str, plugins.Plugin]:
    """name -> plugin for a group's options that come from another distribution's entry point
    and have no file in `config_dir` (the options this module makes)."""
    if group not in GROUPS:
        return {}
    folder = config_dir / group
    return {name: p for name, p in plugins.registered(group).items()
            if not p.builtin and not (folder / f"{name}.yaml").is_file()}


def register_plugin_configs(config_dir: Path) -> list[str]:
    """Store a node per plugin option (group/name); returns what was stored. A plugin whose module
    cannot be imported is stored as its bare class, so a run that chooses it names the import
    error (harness.plugin, the loader's instantiation) and any other run goes on; a declared
    config that is missing or malformed raises here (PluginError), as a name registered twice does."""
    from hydra.core.config_store import ConfigStore

    cs = ConfigStore.instance()
    stored = []
    for group in GROUPS:
        for name, p in plugin_options(config_dir, group).items():
            try:
                node = plugin_node(p)
            except (ImportError, AttributeError):
                bare = {"_target_": p.class_path}
                node = {**bare, "name": name} if group == "method" else {"name": name, "loader": bare}
            cs.store(group=group, name=name, node=node, provider=p.dist)
            stored.append(f"{group}/{name}")
    return stored
