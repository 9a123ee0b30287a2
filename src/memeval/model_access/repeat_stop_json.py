"""Repeat-stop rules for the official packages' JSON replies (`json_strings`, `json_runs`).

They read JSON as model_access.repeat_scan's RepeatScanner does and cut less than GSW's rules:
the packages' replies go on after a repeated item (a graph's edges follow its nodes), so only a
loop that never ends on its own is cut. Registered, with their cache-key names, in
model_access.repeat_stop's RULES.
"""

from __future__ import annotations

import re

from .repeat_scan import (
    COUNT,
    RUN,
    TEXT_NGRAM,
    Cut,
    RepeatScanner,
    _Open,
    canonical_item,
    repeated_run,
)

# -- rule json_strings: a loop inside one JSON string ---------------------------------------
#
# A small model asked for a JSON summary or description can loop inside one string ("the workshop
# is described as a place where participants can push their limits ... the workshop is described
# as a place where ...") until `max_tokens` ends it: the reply is then invalid JSON, which the
# package retries. Seen on cognee's chunk summaries at 1.5B: one such reply ran 2,048 tokens, six
# minutes of a 2-core machine. Here a run of `n` words that the same string already held ends the
# reply: the string is closed after its last whole sentence before the repeat, and the brackets
# still open are closed, so the package gets valid JSON holding everything said before the loop.
#
# Deliberately narrower than GSW's rules. A repeated list item does not end the reply, nor does a
# string that repeats an earlier one: cognee's graph replies list a node twice and then write the
# edges, and cutting at the repeated node (tried first, 2026-12-04) dropped the edges that follow
# the nodes (chapter 1 kept 1 of 4 relationships). A loop inside one string has no such sequel.
#
# Only strings inside a JSON container count (a quote in prose before the JSON starts nothing).
# Escapes are word breaks (`\n`, `\"`, and `\u` with its four hex digits), so a cut never splits
# one. The cut is a pure function of the text, as for every rule of model_access.repeat_stop.

_WORD_CHAR = re.compile(r"[\w'’-]")


class StringRepeatScanner(RepeatScanner):
    """RepeatScanner's JSON reading, with the cut at a word run repeated within one string."""

    def __init__(self, n: int = TEXT_NGRAM):
        super().__init__()
        self.n = n
        self._seen: dict[tuple[str, ...], int] = {}  # n-gram of the open string -> raw offset of its first word
        self._window: list[tuple[str, int]] = []  # (folded word, raw start) in the current string
        self._word_start: int | None = None
        self._string_start: int | None = None  # raw offset of the open string's quote, if counted
        self._blank = 0  # hex digits of a \\u escape still to skip

    def _string_edge(self, start: int | None = None) -> None:
        if start is None:  # the string closes: its last word is complete
            self._end_word(self._pos - 1)  # the closing quote's offset
            self._string_start = None
        else:
            self._string_start = start if self._stack else None
        self._window, self._seen, self._word_start, self._blank = [], {}, None, 0

    def _repeated(self, lst: _Open, item: str) -> bool:
        """A repeated list item is no loop here (see the module docstring)."""
        return False

    def _string_char(self, i: int, ch: str, escaped: bool) -> None:
        if self._string_start is None or self.cut is not None:
            return
        if self._blank:
            self._blank -= 1
            escaped = True
        elif escaped and ch == "u":
            self._blank = 4
        if not escaped and _WORD_CHAR.match(ch):
            if self._word_start is None:
                self._word_start = i
            return
        self._end_word(i)

    def _end_word(self, end: int) -> None:
        if self._word_start is None or self._string_start is None:
            return
        start, self._word_start = self._word_start, None
        self._window.append((self.text[start:end].casefold(), start))
        hit = repeated_run(self._window, self.n, self._seen)
        if hit is not None:
            self.cut = self._close_string(*hit)

    def _close_string(self, first: int, repeat_start: int) -> Cut:
        """The text up to the last sentence end in this string before the repeat (else up to
        the repeat), the string's quote, then the brackets still open, closed."""
        lower = max(first, (self._string_start or 0) + 1)
        ends = [m.end() for m in re.finditer(r"[.!?](?=\s)", self.text[lower:repeat_start])]
        end = lower + ends[-1] if ends else repeat_start
        body = self.text[:end].rstrip()
        while body.endswith("\\") and (len(body) - len(body.rstrip("\\"))) % 2:  # never a lone escape
            body = body[:-1]
        return Cut(body + '"' + self._closers(), repeat_start, "string")


# -- rule json_runs: json_strings, and a list that counts up ---------------------------------
#
# The other loop of cognee's graph replies at 1.5B (EpBench-20, 2026-12-04): a list of nodes whose
# items differ only by a number ("Photography Exhibition, 2026, 29", "... 30", "... 31") or not at
# all, until `max_tokens` cuts the reply into invalid JSON. The package retried each such reply 3
# times, 2,048 tokens each, and stored nothing for the chapter (4 of 19 chapters). Here the
# RUN-th consecutive item of one top-level list that equals the item before it with every digit
# masked ends the reply before that item; the list and the object are closed, so what came before
# stays (cognee's graph model defaults a missing edge list to empty). Runs shorter than RUN, and
# repeats that are not consecutive (a node named twice, then the edges), are left alone: those are
# what json_strings' note above says a cut must not touch.

_DIGITS = re.compile(r"\d+")


class ListRunScanner(StringRepeatScanner):
    """StringRepeatScanner, plus a cut at the RUN-th consecutive top-level item that differs from
    the one before it only in its digits."""

    def __init__(self, n: int = TEXT_NGRAM, run: int = RUN):
        super().__init__(n)
        self.run = run

    def _repeated(self, lst: _Open, item: str) -> bool:
        canon = canonical_item(item)
        if canon is None:
            return False
        masked = _DIGITS.sub("#", canon)
        lst.run_length = lst.run_length + 1 if masked == lst.run_item else 1
        lst.run_item = masked
        return lst.run_length >= self.run


# -- rule json_counts: json_runs, and a list of numbers that never ends ------------------------
#
# Graphiti's extraction replies at 1.5B (EpBench-20, 2026-12-05) loop one level down: an entity's or
# a fact's `episode_indices`, whose only valid value in a one-episode call is 0, counts up
# ("[15, 16, 17, 20, 21, ...]") for 2,000 tokens, and the reply is invalid JSON. The package retried
# each such call and dropped the chapter (3 of the first 15). A list that holds COUNT bare numbers
# in a row and goes on ends the reply there, the brackets closed: the list keeps those COUNT. The
# threshold is far above any list of indices, years or counts a reply of these packages holds (one
# or two indices per fact), and the rule reads numbers only, so lists of names or objects are
# json_runs' (top level) or nobody's (nested).

_NUMBER = re.compile(r"\s*-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\s*")


class NumberRunScanner(ListRunScanner):
    """ListRunScanner, plus a cut after COUNT bare numbers in a row in any list that goes on."""

    def __init__(self, n: int = TEXT_NGRAM, run: int = RUN, count: int = COUNT):
        super().__init__(n, run)
        self.count = count

    def _list_item(self, lst: _Open, comma: int) -> None:
        start = lst.item_start if lst.item_start is not None else lst.start + 1
        lst.numbers = lst.numbers + 1 if _NUMBER.fullmatch(self.text[start:comma]) else 0
        if lst.numbers >= self.count:  # COUNT numbers and the list goes on: it ends here
            self.cut = Cut(self.text[:comma] + self._closers(), comma, lst.key or "numbers")
