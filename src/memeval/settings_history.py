"""What a plugin's settings meant before they existed: the records a method or protocol class
declares in its `settings_history` class attribute, read by the upgrade layer
(memeval.evaluation.runs.upgrade) and by nothing else.

A run folder is never rewritten, and a saved config is the resolved config of its day: a key it
lacks was added to the class after the run was made. So a class that gains a setting whose new
default changes behaviour says what the setting's absence meant (`Introduced`), and the upgrade
layer fills that value into an older config before anything is built from it; a saved run then
replays as it was made. An index parameter that joined a method's index identity after index
folders were named without it hashes as absent at its value of then (`Introduced` with
`hashed_as_absent`, or `HashedAsAbsent` when the hashed value is not the config's), so saved
index folders keep their names. Layer 0: imports nothing of memeval, so methods and evaluation
may both import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Introduced:
    """A setting added after runs were saved without it: `before` is what its absence meant.

    `until_format`: the run format (config.yaml `run_format`) from which every saved config has
    the key; a config of an older format that lacks it gets `before` (1: the settings that
    predate run_format). None: the key came after the last format change, so a config of any
    format that lacks it was saved before it existed and gets `before`.
    `hashed_as_absent`: the setting is also one of the method's index parameters
    (`MemoryMethod.params`) and, at `before`, hashes into the index folder name as if absent."""

    key: str
    before: Any
    until_format: int | None = 1
    hashed_as_absent: bool = False

    def fills(self, run_format: int) -> bool:
        """Whether a config of this run format that lacks the key gets `before`."""
        return self.until_format is None or run_format < self.until_format


@dataclass(frozen=True)
class HashedAsAbsent:
    """An index parameter that joined the method's index identity after index folders were named
    without it: at `value` (its value in `MemoryMethod.params`, which may differ from the
    config's, e.g. None for a feature that is off) it hashes as absent."""

    key: str
    value: Any


Record = Introduced | HashedAsAbsent


def introduced(history: tuple[Record, ...], run_format: int) -> list[tuple[str, Any]]:
    """(key, value its absence meant) for every setting a config of this format may lack."""
    return [(r.key, r.before) for r in history if isinstance(r, Introduced) and r.fills(run_format)]


def hashed_as_absent(history: tuple[Record, ...]) -> list[tuple[str, Any]]:
    """(key, value) for every index parameter that hashes as absent at that value."""
    return [(r.key, r.value) if isinstance(r, HashedAsAbsent) else (r.key, r.before)
            for r in history if isinstance(r, HashedAsAbsent) or r.hashed_as_absent]
