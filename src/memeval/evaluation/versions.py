"""Behaviour tables: a protocol setting's version number -> the named behaviours it switches on.

Scoring code never compares version numbers: each protocol family has one behaviour module
(epbench/behaviour.py, conversations/behaviour.py) whose frozen objects turn the configured
versions into named switches (`rules.whole_names`, not `version >= 7`); the protocol builds its
object once from its config and hands the parts to the scoring functions. The table below each
object is the only place a version number decides anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields

from memeval.model_access.errors import ConfigError


class UnknownVersion(ConfigError, ValueError):
    """A version no behaviour table knows (a ConfigError, and a ValueError as the protocols'
    own setting checks raise)."""


def switched_on(table: Mapping[int, Sequence[str]], version: int, setting: str,
                cumulative: bool) -> frozenset[str]:
    """The behaviours `version` switches on: its own table row, and with `cumulative` every
    earlier row too (a version that keeps all that the earlier ones did)."""
    if version not in table:
        raise UnknownVersion(f"{setting} {version!r} is not a known version; known: {sorted(table)}")
    rows = [table[v] for v in sorted(table) if v <= version] if cumulative else [table[version]]
    return frozenset(name for row in rows for name in row)


def switches(cls: type, table: Mapping[int, Sequence[str]], version: int, setting: str,
             cumulative: bool = True) -> dict[str, bool]:
    """Keyword arguments for the frozen behaviour class `cls`: every bool field, True when the
    table switches it on for `version`; a table name that is no field of `cls` is refused."""
    on = switched_on(table, version, setting, cumulative)
    flags = [f.name for f in fields(cls) if f.type in ("bool", bool)]
    unknown = on - set(flags)
    if unknown:
        raise TypeError(f"{cls.__name__}'s table names {sorted(unknown)}, which are not its fields")
    return {name: name in on for name in flags}
