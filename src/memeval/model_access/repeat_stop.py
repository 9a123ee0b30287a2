"""End a looping reply at its first repeat: a repeated JSON list item (the JSON is closed there),
a repeated block of a line-layout reply, or a repeated run of words in plain text.

Greedy decoding on a small model can loop: the same entity or verb-phrase object is written
again and again until the grammar's item bound or `max_tokens` ends the reply. Those repeats
carry nothing new (an identical object is the same extraction), yet they were half of a local
Operator's generated tokens, and a reply cut by `max_tokens` is invalid JSON that costs repair
calls on top. The rule here is deliberately narrow so that a reply without a loop is untouched:
an object item of a *top-level* list (a list that is a value of the root object) that is
identical, after parsing and leaving out its `id` key, to an earlier item of the same list ends
the reply (looping entities count their ids up: e4, e5, ... with the same name and roles); the
text is cut after the previous item and the open brackets are closed. Nested lists (an entity's
roles, a verb phrase's questions) are never cut.

Line layouts (model_access.text_format) have the same rule one level up: a block is a line that
does not start with whitespace plus the indented lines under it (an entity with its roles and
states, an action with its questions), and a block identical to an earlier one, its head's first
word left out when that is an id, ends the reply before it. A single line is not the unit: two
entities may well both have the role line " r guest".

The packages' JSON replies get rules of their own (model_access.repeat_stop_json): `json_strings`,
where a loop inside one string value ends the reply and nothing else does, and `json_runs`, which
adds a list whose items count up.

The cut is a pure function of the reply's text, so cutting a streamed reply as it arrives and
cutting the whole reply afterwards give the same text; streaming only saves the tokens.
"""

from __future__ import annotations

from .repeat_scan import (
    COUNT,
    RUN,
    TEXT_NGRAM,
    Cut,
    LineBlockScanner,
    NgramScanner,
    RepeatScanner,
    cut_repeats,
    cut_text_repeats,
)
from .repeat_stop_json import ListRunScanner, NumberRunScanner, StringRepeatScanner

__all__ = ["RULES", "Cut", "LineBlockScanner", "NgramScanner", "RepeatScanner", "cut_by", "cut_repeats",
           "cut_text_repeats", "cut_whole", "scanner_for"]

# rule -> the name that joins the cache key of every call using it
RULES = {"json_items": "repeated_top_level_item_ignoring_id/v1", "text_ngrams": f"repeated_{TEXT_NGRAM}_words/v1",
         "line_blocks": "repeated_line_block_ignoring_id/v1",
         "json_strings": f"repeated_{TEXT_NGRAM}_words_within_one_json_string/v1",
         "json_runs": f"repeated_{TEXT_NGRAM}_words_within_one_json_string+{RUN}_items_alike_but_digits/v1",
         "json_counts": f"repeated_{TEXT_NGRAM}_words_within_one_json_string+{RUN}_items_alike_but_digits"
                        f"+{COUNT}_numbers_in_a_row/v1"}


def scanner_for(rule: str) -> RepeatScanner | NgramScanner | LineBlockScanner:
    """A fresh scanner for a rule name of RULES (`json_items` for JSON replies, `json_strings` for
    JSON replies whose strings may loop too, `json_runs` for those whose lists may count up too,
    `line_blocks` for line layouts, `text_ngrams` for prose)."""
    if rule == "json_items":
        return RepeatScanner()
    if rule == "line_blocks":
        return LineBlockScanner()
    if rule == "text_ngrams":
        return NgramScanner(TEXT_NGRAM)
    if rule == "json_strings":
        return StringRepeatScanner(TEXT_NGRAM)
    if rule == "json_runs":
        return ListRunScanner(TEXT_NGRAM, RUN)
    if rule == "json_counts":
        return NumberRunScanner(TEXT_NGRAM, RUN, COUNT)
    raise ValueError(f"unknown repeat-stop rule {rule!r}; choose one of {sorted(RULES)}")


def cut_by(rule: str, text: str) -> Cut | None:
    """The cut a rule makes in a whole reply (None when nothing repeats)."""
    scanner = scanner_for(rule)
    scanner.feed(text)
    return scanner.finish()


def cut_whole(rule: str, text: str) -> str:
    """A whole reply under a rule: its cut text, or the text itself when nothing repeats."""
    cut = cut_by(rule, text)
    return cut.text if cut is not None else text
