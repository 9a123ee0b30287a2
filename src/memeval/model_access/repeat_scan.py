"""The scanners behind model_access.repeat_stop's rules: a JSON reply's repeated top-level item,
a line layout's repeated block, a plain reply's repeated run of words. Each reads a reply piece by
piece (`feed`) and sets `cut` at the first repeat; the rules that choose among them live in
model_access.repeat_stop, the JSON packages' rules in model_access.repeat_stop_json.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

TEXT_NGRAM = 12  # words in a repeated run that ends a plain-text reply


def finish_with_space(scanner: RepeatScanner | NgramScanner) -> Cut | None:
    """End a scanner's reply: one space fed completes what is pending (an item, a word), then
    leaves the reply's text as it was."""
    if scanner.cut is None:
        scanner.feed(" ")
        scanner.text = scanner.text[:-1]
    return scanner.cut


@dataclass
class _Open:
    kind: str  # "{" or "["
    start: int  # offset of the bracket
    top_level_list: bool = False  # a list that is a value of the root object
    key: str | None = None  # that list's key in the root object
    seen: set[str] = field(default_factory=set)  # canonical items of that list
    last_item_end: int | None = None  # offset just after the list's last complete item
    run_item: str | None = None  # rule json_runs: the last item with its digits masked ...
    run_length: int = 0  # ... and how many items in a row were alike but for their digits
    item_start: int | None = None  # rule json_counts: offset where the list's current item begins ...
    numbers: int = 0  # ... and how many bare numbers in a row the list holds so far


@dataclass(frozen=True)
class Cut:
    """Where a reply was cut: `text` is the closed JSON; `at` the offset of the repeated item."""

    text: str
    at: int
    repeated_in: str  # the list's key, e.g. "entities"


class RepeatScanner:
    """Reads a JSON reply incrementally (`feed` each streamed piece); `cut` is set at the first
    repeated top-level item. Text outside JSON syntax (prose, fences) is scanned the same way;
    a reply that is not a JSON object simply never triggers."""

    def __init__(self) -> None:
        self.text = ""
        self.cut: Cut | None = None
        self._pos = 0
        self._stack: list[_Open] = []
        self._in_string = False
        self._escape = False
        self._last_key: str | None = None
        self._key_start: int | None = None

    def feed(self, piece: str) -> Cut | None:
        if self.cut is not None:
            return self.cut
        self.text += piece
        text = self.text
        while self._pos < len(text):
            i, ch = self._pos, text[self._pos]
            self._pos += 1
            if self._in_string:
                if self._escape:
                    self._escape = False
                    self._string_char(i, ch, True)
                elif ch == "\\":
                    self._escape = True
                    self._string_char(i, ch, True)
                elif ch == '"':
                    self._in_string = False
                    if self._key_start is not None:
                        self._last_key = text[self._key_start + 1:i]
                        self._key_start = None
                    self._string_edge()
                else:
                    self._string_char(i, ch, False)
                if self.cut is not None:
                    return self.cut
                continue
            if ch == '"':
                self._in_string = True
                self._string_edge(i)
                parent = self._stack[-1] if self._stack else None
                # a string directly inside the root object may be a key; remember it
                self._key_start = i if parent is not None and parent.kind == "{" and len(self._stack) == 1 else None
            elif ch in "{[":
                top = len(self._stack) == 1 and self._stack[0].kind == "{" and ch == "["
                self._stack.append(_Open(ch, i, top_level_list=top, key=self._last_key if top else None,
                                         item_start=i + 1))
            elif ch == "," and self._stack and self._stack[-1].kind == "[":
                self._list_item(self._stack[-1], i)
                if self.cut is not None:
                    return self.cut
                self._stack[-1].item_start = i + 1
            elif ch in "}]" and self._stack:
                closed = self._stack.pop()
                parent = self._stack[-1] if self._stack else None
                if parent is not None and parent.top_level_list and closed.kind == "{":
                    if self._repeated(parent, text[closed.start:i + 1]):
                        self.cut = self._close(parent, closed.start)
                        return self.cut
                    parent.last_item_end = i + 1
        return None

    def finish(self) -> Cut | None:
        """The reply has ended: what is still pending is complete (the text stays the reply's)."""
        return finish_with_space(self)

    def _string_char(self, i: int, ch: str, escaped: bool) -> None:
        """A character inside a string (`escaped`: a backslash or the character after one)."""

    def _string_edge(self, start: int | None = None) -> None:
        """A string opens at `start`, or (None) the open one closes."""

    def _list_item(self, lst: _Open, comma: int) -> None:
        """An item of any list ends at `comma` (json_counts reads it; no other rule does)."""

    def _repeated(self, lst: _Open, item: str) -> bool:
        canon = canonical_item(item, drop_id=True)  # a new id on the same content is still a repeat
        if canon is None:
            return False
        if canon in lst.seen:
            return True
        lst.seen.add(canon)
        return False

    def _close(self, lst: _Open, repeat_start: int) -> Cut:
        """The text up to the list's last new item, then the brackets still open, closed."""
        end = lst.last_item_end if lst.last_item_end is not None else lst.start + 1
        return Cut(self.text[:end] + self._closers(), repeat_start, lst.key or "?")

    def _closers(self) -> str:
        """The brackets still open, closed innermost first."""
        return "".join("]" if o.kind == "[" else "}" for o in reversed(self._stack))


def canonical_item(item: str, drop_id: bool = False) -> str | None:
    """A list item's JSON text in one canonical form (keys sorted; an object's `id` left out with
    `drop_id`), or None when it does not parse: what the rules compare items by."""
    try:
        value = json.loads(item)
    except ValueError:
        return None
    if drop_id and isinstance(value, dict):
        value = {k: v for k, v in value.items() if k != "id"}
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def cut_repeats(text: str) -> Cut | None:
    """The cut of a whole reply (None when no top-level item repeats)."""
    return RepeatScanner().feed(text)


_WORD = re.compile(r"[\w'’-]+")
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s")


def repeated_run(words: list[tuple[str, int]], n: int, seen: dict[tuple[str, ...], int]) -> tuple[int, int] | None:
    """After a word was appended to `words` ((folded word, offset) pairs): the offsets of the
    first occurrence and of the repeat when its last `n` words were seen before, else None
    (and the run is recorded in `seen`)."""
    if len(words) < n:
        return None
    gram = tuple(w for w, _ in words[-n:])
    start = words[-n][1]
    if gram in seen:
        return seen[gram], start
    seen[gram] = start
    return None


class NgramScanner:
    """The plain-text counterpart: a run of `n` words (case-folded) that already occurred in the
    reply ends it. The text is cut before the repeat, at the last sentence end when there is
    one after the first occurrence, so the reply keeps only whole sentences it had not said yet."""

    def __init__(self, n: int = TEXT_NGRAM):
        self.n = n
        self.text = ""
        self.cut: Cut | None = None
        self._pos = 0
        self._words: list[tuple[str, int]] = []  # (folded word, start offset)
        self._seen: dict[tuple[str, ...], int] = {}  # n-gram -> start offset of its first word

    def feed(self, piece: str) -> Cut | None:
        if self.cut is not None:
            return self.cut
        self.text += piece
        for m in _WORD.finditer(self.text, self._pos):
            if m.end() == len(self.text):  # the word may go on in the next piece
                break
            self._pos = m.end()
            self._words.append((m.group().casefold(), m.start()))
            hit = repeated_run(self._words, self.n, self._seen)
            if hit is not None:
                self.cut = self._close(*hit)
                return self.cut
        return None

    def finish(self) -> Cut | None:
        """The reply has ended: its last word is complete (the text stays the reply's)."""
        return finish_with_space(self)

    def _close(self, first: int, repeat_start: int) -> Cut:
        ends = [m.end() for m in _SENTENCE_END.finditer(self.text, first, repeat_start + 1)]
        end = ends[-1] if ends else repeat_start
        return Cut(self.text[:end].rstrip(), repeat_start, "text")


def cut_text_repeats(text: str, n: int = TEXT_NGRAM) -> Cut | None:
    """The cut of a whole plain-text reply (None when no n-word run repeats)."""
    return NgramScanner(n).feed(text + " ")


_HEAD_ID = re.compile(r"[A-Za-z]+\d+(?=\s|$)")


class LineBlockScanner:
    """The line-layout counterpart of RepeatScanner: blocks (a head line and the indented lines
    under it) are compared once complete, i.e. when the next head line is; blank lines are
    ignored. The cut keeps the text before the repeated block, which ends with its newline."""

    def __init__(self) -> None:
        self.text = ""
        self.cut: Cut | None = None
        self._pos = 0  # start of the first line not read yet
        self._start = 0  # offset of the current block's head line
        self._block: list[str] = []
        self._seen: set[tuple[str, ...]] = set()

    def feed(self, piece: str) -> Cut | None:
        if self.cut is not None:
            return self.cut
        self.text += piece
        while self.cut is None and (end := self.text.find("\n", self._pos)) >= 0:
            self._line(self._pos, end)
            self._pos = end + 1
        return self.cut

    def finish(self) -> Cut | None:
        """The reply has ended: its last line and block are complete."""
        if self.cut is None and self._pos < len(self.text):
            self._line(self._pos, len(self.text))
            self._pos = len(self.text)
        if self.cut is None:
            self._close()
        return self.cut

    def _line(self, start: int, end: int) -> None:
        line = self.text[start:end].rstrip()
        if not line:
            return
        if line[0].isspace():
            self._block.append(line)
            return
        self._close()
        if self.cut is None:
            self._start, self._block = start, [_HEAD_ID.sub("", line, count=1)]

    def _close(self) -> None:
        if not self._block:
            return
        canon = tuple(self._block)
        if canon in self._seen:
            self.cut = Cut(self.text[:self._start], self._start, "lines")
        self._seen.add(canon)


RUN = 4  # rule json_runs: consecutive items alike but for their digits that end a reply
COUNT = 16  # rule json_counts: bare numbers in a row in one list that end a reply
