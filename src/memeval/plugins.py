"""The plugin registry: methods, datasets and protocols (judges) found by entry points.

The built-in plugins register exactly as a third party's do, in their distribution's metadata
(pyproject.toml, `[project.entry-points."memeval.methods"]` and the like), so the core asks the
registry for "every method" or "the plugin behind this class" and never names one itself. An
entry point's value is `module:Class`; nothing is imported until a caller loads a plugin.
"""

from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass
from importlib.metadata import entry_points

GROUPS = {"method": "memeval.methods", "dataset": "memeval.datasets", "protocol": "memeval.protocols"}


class PluginError(LookupError):
    """A plugin name nothing registers, or one name registered twice."""


@dataclass(frozen=True)
class Plugin:
    kind: str  # method | dataset | protocol
    name: str  # the entry point's name: what `memeval ls` lists
    value: str  # module:Class
    dist: str  # the distribution that registered it ("memeval" for the built-in ones)

    @property
    def module(self) -> str:
        return self.value.split(":", 1)[0]

    @property
    def class_path(self) -> str:
        """The dotted path a Hydra config's `_target_` names."""
        return self.value.replace(":", ".")

    @property
    def builtin(self) -> bool:
        return self.dist == "memeval"

    def load(self) -> type:
        import importlib

        module, _, attr = self.value.partition(":")
        obj: object = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
        if not isinstance(obj, type):
            raise PluginError(f"{self.kind} plugin {self.name!r} ({self.value}, from {self.dist}) is not a class")
        return obj


def _group(kind: str) -> str:
    if kind not in GROUPS:
        raise PluginError(f"unknown plugin kind {kind!r}; kinds: {', '.join(GROUPS)}")
    return GROUPS[kind]


@functools.cache
def registered(kind: str) -> dict[str, Plugin]:
    """name -> Plugin for every installed distribution's entry points of this kind, by name."""
    found: dict[str, Plugin] = {}
    for ep in entry_points(group=_group(kind)):
        dist = ep.dist.name if ep.dist is not None else "?"
        plugin = Plugin(kind, ep.name, ep.value, dist)
        other = found.get(ep.name)
        if other is not None and other.value != plugin.value:
            raise PluginError(f"{kind} {ep.name!r} is registered twice: {other.value} (from {other.dist}) and "
                              f"{plugin.value} (from {plugin.dist}); uninstall one or rename its entry point")
        found[ep.name] = plugin
    return dict(sorted(found.items()))


def plugin(kind: str, name: str) -> Plugin:
    """The plugin registered under `name`; a PluginError naming the nearest names otherwise."""
    known = registered(kind)
    if name in known:
        return known[name]
    near = difflib.get_close_matches(name, list(known), n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    raise PluginError(f"no {kind} plugin named {name!r}{hint} (registered: {', '.join(known) or 'none'}; "
                      f"a plugin registers in its pyproject under [project.entry-points.\"{GROUPS[kind]}\"])")


def plugin_of_class(kind: str, class_path: str) -> Plugin | None:
    """The registered plugin whose class is at this dotted path (a config's `_target_`), if any."""
    return next((p for p in registered(kind).values() if p.class_path == class_path), None)


def loadable(kind: str) -> dict[str, type]:
    """name -> class for every plugin of this kind whose module imports here (one that does not
    is left out: readers of optional metadata never fail on another package's broken install)."""
    found: dict[str, type] = {}
    for name, p in registered(kind).items():
        try:
            found[name] = p.load()
        except (ImportError, AttributeError, PluginError):
            continue
    return found


def class_named(kind: str, name: object) -> type | None:
    """The class a saved artifact names by its `name` attribute (meta.json's protocol name): the
    plugin registered under that name first, else any loadable one whose class has that name."""
    if not isinstance(name, str):
        return None
    classes = loadable(kind)
    return next((classes[k] for k in sorted(classes, key=lambda k: k != name)
                 if getattr(classes[k], "name", None) == name), None)


def load_all(kind: str) -> dict[str, type]:
    """name -> class for every plugin of this kind (imports each plugin's module)."""
    return {name: p.load() for name, p in registered(kind).items()}


def load_object(ref: str) -> object:
    """The object a `module:attr` reference names (an adapter a plugin class declares as a string,
    so that declaring it imports nothing: the adapter's module may import the plugin's)."""
    import importlib

    module, _, attr = ref.partition(":")
    obj: object = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def refresh() -> None:
    """Forget what was read (after a plugin is installed in this process, e.g. by a test)."""
    registered.cache_clear()
