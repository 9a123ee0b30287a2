"""`memeval ls methods|datasets|judges|...` and `memeval info NAME`: what a run can be composed of.

Read from conf/ (the options Hydra composes), the plugin registry (an installed package's method
or dataset with no file in conf/, named with the distribution that registered it) and, for a
method, its class (the parameters it takes, its docstring), so the list can never drift from what
`memeval run` accepts.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

from .names import PLURAL, _method_target, options, plugin_options
from .run import CONF

GROUPS = {"methods": "method", "datasets": "dataset", "judges": "judge", "llms": "llm", "embedders": "embedder",
          "experiments": "experiment", "presets": "preset"}


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().splitlines()[0] if (doc or "").strip() else ""


def _class_doc(target: str | None) -> str:
    try:
        from memeval.harness.plugin import method_class

        cls = method_class(target) if target else None
        return _first_line(cls.__doc__ or sys.modules[cls.__module__].__doc__) if cls is not None else ""
    except (ImportError, AttributeError, ValueError):
        return "(its class cannot be imported here)"


def _source(group: str, target: str | None) -> str:
    """` [from DIST]` for a class only another distribution registers (nothing for memeval's own)."""
    from memeval import plugins

    if not target or group not in plugins.GROUPS:
        return ""
    dists = [p.dist for p in plugins.registered(group).values() if p.class_path == target]
    return f" [from {dists[0]}]" if dists and "memeval" not in dists else ""


def _describe(group: str, name: str, config_dir: Path) -> str:
    """One line: the option and, for a method or a plugin's dataset, what its class says it is
    and, for a plugin another package registered, that package."""
    plugin = plugin_options(config_dir, group).get(name)
    if plugin is not None:
        return f"{name:28s} {_class_doc(plugin.class_path)} [from {plugin.dist}]"
    if group == "method":
        target = _method_target(config_dir, name)
        return f"{name:28s} {_class_doc(target)}{_source(group, target)}"
    return name


def ls_main(argv: list[str], config_dir: Path = CONF) -> int:
    """`memeval ls [methods|datasets|judges|llms|embedders|experiments|presets]` (default: methods)."""
    what = argv[0] if argv else "methods"
    if what in ("-h", "--help"):
        print(f"memeval ls [{'|'.join(GROUPS)}]: the options `memeval run` takes for each")
        return 0
    group = GROUPS.get(what)
    if group is None:
        near = difflib.get_close_matches(what, list(GROUPS), n=1)
        hint = f"; did you mean '{near[0]}'?" if near else ""
        print(f"error: nothing to list as '{what}'{hint} (memeval ls {'|'.join(GROUPS)})", file=sys.stderr)
        return 2
    try:
        for name in options(config_dir, group):
            print(_describe(group, name, config_dir))
    except BrokenPipeError:  # `memeval ls | head`
        sys.stderr.close()
    return 0


def info_main(argv: list[str], config_dir: Path = CONF) -> int:
    """`memeval info NAME`: the option's group, its config file and, for a method, the parameters its class takes."""
    if not argv or argv[0] in ("-h", "--help"):
        print("memeval info NAME: a method, dataset, judge, ... with its config and, for a method, its parameters")
        return 0 if argv else 2
    name = argv[0]
    found = [(g, name) for g in GROUPS.values() if name in options(config_dir, g)]
    if not found:
        every = sorted({o for g in GROUPS.values() for o in options(config_dir, g)})
        near = difflib.get_close_matches(name, every, n=1)
        hint = f"; did you mean '{near[0]}'?" if near else ""
        print(f"error: no method, dataset, judge or other option is called '{name}'{hint} (memeval ls lists them)",
              file=sys.stderr)
        return 2
    for group, option in found:
        path = config_dir / group / f"{option}.yaml"
        if path.is_file():
            print(f"{option}: a {group} option ({PLURAL.get(group, group)}), conf/{group}/{option}.yaml")
            print(path.read_text(encoding="utf-8").rstrip())
        else:
            _plugin_config(config_dir, group, option)
        if group == "method":
            _method_info(config_dir, option)
    return 0


def _plugin_config(config_dir: Path, group: str, option: str) -> None:
    """A plugin's option: who registered it, and the config `memeval run` composes for it."""
    import yaml

    from memeval.harness.plugin_configs import plugin_node
    from memeval.plugins import GROUPS as ENTRY_GROUPS

    plugin = plugin_options(config_dir, group)[option]
    print(f"{option}: a {group} option ({PLURAL.get(group, group)}) from the plugin package {plugin.dist} "
          f"(entry point {ENTRY_GROUPS[group]}: {option} = {plugin.value}); its config, from its class "
          "and the config it ships:")
    print(yaml.safe_dump(plugin_node(plugin), sort_keys=False).rstrip())


def _method_info(config_dir: Path, option: str) -> None:
    from memeval.harness.plugin import accepted_params, method_class, method_code

    target = _method_target(config_dir, option)
    if not target:
        return
    cls = method_class(target)
    params = accepted_params(cls)
    print(f"class: {target}{_source('method', target)}")
    if cls.__doc__:
        print(f"  {_first_line(cls.__doc__)}")
    print("parameters: " + (", ".join(params) if params is not None else "any (its constructor takes **kwargs)"))
    code = method_code(target)
    if code is not None:  # what meta.json records as method_code
        print(f"records: method_code {code.module} ({code.files} files, sha256 {code.sha256[:12]}...)"
              + ("" if code.core else "; joins the run and index folder names (outside the core)"))
