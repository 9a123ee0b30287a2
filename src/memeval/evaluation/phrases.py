"""The phrases shared display code words a benchmark with, read from the protocol classes.

Each protocol class declares how prose names it and what its checks are (`Protocol.title`,
`agreement_check`, ...); the report, the judge matrix and a bundle's README ask here, through the
plugin registry, and so name no benchmark themselves. A sentence about every benchmark lists
each installed protocol that declares the phrase, in registry (name) order.
"""

from __future__ import annotations

from typing import Any

from memeval import plugins

from .protocol import Protocol


def protocol_classes() -> dict[str, type[Protocol]]:
    """Registered name -> class of every installed protocol that imports here (one that does
    not is left out: a phrase is not worth failing a report over)."""
    return {name: cls for name, cls in plugins.loadable("protocol").items() if issubclass(cls, Protocol)}


def protocol_named(name: Any) -> type[Protocol] | None:
    """The protocol class whose `name` a run's meta.json records (`protocol.protocol`)."""
    cls = plugins.class_named("protocol", name)
    return cls if cls is not None and issubclass(cls, Protocol) else None


def protocol_of(meta: dict[str, Any]) -> type[Protocol] | None:
    """The protocol class of a run, from its meta.json."""
    desc = meta.get("protocol")
    return protocol_named(desc.get("protocol") if isinstance(desc, dict) else desc)


def title(cls: type[Protocol]) -> str:
    """How prose names the benchmark: its `title`, else its name."""
    return cls.title or cls.name


def declared(attr: str) -> list[tuple[str, str]]:
    """(title, phrase) of every installed protocol declaring `attr`, in registry order."""
    return [(title(cls), str(value)) for cls in protocol_classes().values() if (value := getattr(cls, attr, None))]


def grouped(attr: str) -> list[tuple[list[str], str]]:
    """declared(attr) with the protocols of one phrase together, in order of first appearance:
    [(titles, phrase)]."""
    groups: dict[str, list[str]] = {}
    for name, phrase in declared(attr):
        groups.setdefault(phrase, []).append(name)
    return [(names, phrase) for phrase, names in groups.items()]


def and_list(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
