"""Text checks shared by the methods' output guards: is a value the model wrote really in the
passage it read, or was it copied from the prompt's examples?

Small models copy a prompt's example values into every reply (measured: GSW's Operator and
SEEM's frame call on the 0.5B model). A guard built on these checks drops such values and
counts them, so a drifting model shows up in the index summary instead of in the memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_STOP = {"the", "a", "an", "of", "and", "in", "on", "at", "to", "for", "mr", "mrs", "ms", "dr", "st"}


def norm(text: str) -> str:
    """Lower case, punctuation to spaces, single spaces."""
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


class ChunkText:
    """One passage's text, normalised once, for phrase and word look-ups."""

    def __init__(self, text: str):
        self.phrase = f" {norm(text)} "
        self.words = set(self.phrase.split())

    def has_phrase(self, value: str) -> bool:
        key = norm(value)
        return bool(key) and f" {key} " in self.phrase

    def has_name(self, name: str) -> bool:
        """The name as a phrase, or at least half of its content words (and at least one)."""
        if self.has_phrase(name):
            return True
        content = [w for w in norm(name).split() if w not in _STOP]
        hits = sum(1 for w in content if w in self.words)
        return bool(content) and hits >= 1 and 2 * hits >= len(content)


def copied(values: Iterable[str], text: ChunkText, examples: Iterable[str]) -> list[str]:
    """The values that equal an example value the passage itself does not contain."""
    keys = {norm(e) for e in examples}
    return [v for v in values if norm(v) in keys and not text.has_phrase(v)]
