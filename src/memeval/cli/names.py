"""Names on a `memeval run` / `memeval estimate` command line, checked before Hydra composes.

An unknown option of a config group (`method=gws`) was Hydra's list of 25 options with no hint,
and an unknown method parameter a TypeError traceback after the run folder was made
(`+method.top_kk=3`) or Hydra's advice to add it with `+` (`method.top_kk=3`). Here each is one
line naming the nearest name, and the command exits 2 before anything is composed or written.
Overrides this module cannot read (a sweep over a glob, a config path of the user's own) are
left to Hydra.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

PLURAL = {"method": "methods", "dataset": "datasets", "llm": "answering models", "llm_index": "indexing models",
          "judge": "judges", "embedder": "embedders", "experiment": "experiments", "preset": "presets"}
OWN_CONFIGS = ("hydra.searchpath", "--config-dir", "-cd", "--config-path", "-cp", "--config-name", "-cn")


def options(config_dir: Path, group: str) -> list[str]:
    """A group's options as Hydra names them (a file in a subfolder: `paper/gsw`), with an
    installed plugin's that has no file (harness/plugin_configs.py makes its config)."""
    folder = config_dir / group
    files = {p.relative_to(folder).with_suffix("").as_posix() for p in folder.rglob("*.yaml")}
    return sorted(files | set(plugin_options(config_dir, group)))


def plugin_options(config_dir: Path, group: str) -> dict[str, Any]:
    """name -> registry Plugin for the group's options that come from another distribution."""
    from memeval.harness.plugin_configs import plugin_options as found

    return found(config_dir, group)


def _groups(config_dir: Path) -> set[str]:
    return {p.name for p in config_dir.iterdir() if p.is_dir() and p.name != "hydra" and any(p.rglob("*.yaml"))}


def _values(override: Any) -> list[str]:
    """The option names an override chooses (each of a sweep's), as strings; [] when not literal."""
    from hydra.core.override_parser.types import ChoiceSweep

    if override.is_sweep_override():
        value = override.value()
        return [str(v) for v in value.list] if isinstance(value, ChoiceSweep) else []
    value = override.value()
    return [value] if isinstance(value, str) else []


def _unknown_option(config_dir: Path, group: str, name: str, command: str) -> str:
    known = options(config_dir, group)
    shown = [o for o in known if "/" not in o]  # a subfolder's options are selected by their group's
    near = difflib.get_close_matches(name, shown, n=1)
    hint = f"; did you mean '{near[0]}'?" if near else ""
    return (f"unknown {group} '{name}'{hint} ({command} --help lists {PLURAL.get(group, group + ' options')}: "
            f"{', '.join(shown)})")


def _default_choice(config_dir: Path, group: str) -> str | None:
    import yaml

    defaults = yaml.safe_load((config_dir / "config.yaml").read_text()).get("defaults") or []
    return next((str(d[group]) for d in defaults if isinstance(d, dict) and group in d), None)


def _method_target(config_dir: Path, name: str, seen: frozenset[str] = frozenset()) -> str | None:
    """The `_target_` of a method option, through its defaults list (gsw_global -> gsw)."""
    import yaml

    path = config_dir / "method" / f"{name}.yaml"
    if name in seen:
        return None
    if not path.is_file():  # a plugin's option, or none
        plugin = plugin_options(config_dir, "method").get(name)
        return plugin.class_path if plugin is not None else None
    node = yaml.safe_load(path.read_text()) or {}
    if node.get("_target_"):
        return str(node["_target_"])
    for entry in node.get("defaults") or []:
        if isinstance(entry, str) and entry != "_self_":
            found = _method_target(config_dir, entry, seen | {name})
            if found:
                return found
    return None


def check(argv: list[str], config_dir: Path, command: str = "memeval run") -> str | None:
    """The first unknown group option or method parameter among `argv`'s overrides, as one line
    (None: every name is known, or the command line points Hydra at configs of its own)."""
    if any(a.split("=", 1)[0] in OWN_CONFIGS for a in argv):
        return None
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    parsed = []
    for arg in argv:
        if arg.startswith("-") or "=" not in arg:
            continue
        try:
            parsed.append(parser.parse_override(arg))
        except Exception:  # noqa: BLE001 - a malformed override: Hydra says what is wrong with it
            continue
    groups = _groups(config_dir)
    chosen: list[str] | None = None
    target: str | None = None
    params: list[str] = []
    for o in parsed:
        key = o.key_or_group
        if o.is_delete() or o.package is not None:
            continue
        if key in groups:
            known = set(options(config_dir, key))
            for name in _values(o):
                if name not in known:
                    return _unknown_option(config_dir, key, name, command)
            if key == "method":
                chosen = _values(o) or None
        elif key.startswith("method."):
            param = key.split(".")[1]
            if param == "_target_" and isinstance(o.value(), str):
                target = str(o.value())
            elif not param.startswith("_"):
                params.append(param)
    if not params:
        return None
    return _param_problem(config_dir, chosen, target, params)


def _param_problem(config_dir: Path, chosen: list[str] | None, target: str | None, params: list[str]) -> str | None:
    from memeval.harness.plugin import method_class, unknown_param_message

    for name in chosen or [_default_choice(config_dir, "method") or ""]:
        path = target or _method_target(config_dir, name)
        if not path:
            continue
        try:
            cls = method_class(path)
        except (ImportError, AttributeError, ValueError):
            continue  # the composed config's check names it (harness.build)
        if problem := unknown_param_message(name, cls, params):
            return problem
    return None
