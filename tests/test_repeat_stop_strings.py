"""Repeat-stop inside JSON strings (rule json_strings): a string that loops ends at its last whole
sentence before the repeat, the JSON is closed and valid; a reply without a loop, and repeats
across strings or list items, are untouched; a streamed cut equals the whole-reply cut. Texts
are invented."""

from __future__ import annotations

import json
import random

from memeval.model_access.repeat_stop import RULES, cut_whole, scanner_for

LOOP = "The fair is a place where weavers can meet and share their patterns with friends. "


def _pieces(text: str, seed: int):
    scanner, rng, i = scanner_for("json_strings"), random.Random(seed), 0
    while i < len(text) and scanner.cut is None:
        n = rng.randint(1, 9)
        scanner.feed(text[i:i + n])
        i += n
    return scanner.finish()


def test_a_looping_string_is_cut_after_its_last_new_sentence_and_closed() -> None:
    reply = json.dumps({"summary": "A spring fair in Velden. " + LOOP * 6, "description": "never reached"})
    out = json.loads(cut_whole("json_strings", reply))
    assert out == {"summary": "A spring fair in Velden. " + LOOP.strip()}
    nested = json.dumps({"nodes": [{"id": "n1", "name": "Velden fair", "description": "Weavers came. " + LOOP * 4}]})
    cut = json.loads(cut_whole("json_strings", nested))
    assert cut == {"nodes": [{"id": "n1", "name": "Velden fair", "description": "Weavers came. " + LOOP.strip()}]}


def test_repeats_across_strings_or_list_items_are_left_alone() -> None:
    """A graph reply that lists a node twice goes on to its edges: cutting there lost them."""
    node = {"id": "n1", "name": "Velden fair", "description": "A fair where weavers from three valleys bring their looms"}
    graph = json.dumps({"nodes": [node, {"id": "n2", "name": "Ada Roon"}, node],
                        "edges": [{"source": "n2", "target": "n1", "relation": "visits"}]})
    assert cut_whole("json_strings", graph) == graph


def test_escapes_are_never_split_and_a_clean_reply_is_untouched() -> None:
    reply = '{"d": "Line one\\u00e9\\n' + LOOP.strip() + ' and ' + LOOP.strip() + '"}'
    out = cut_whole("json_strings", reply)
    assert json.loads(out)["d"].startswith("Line one\u00e9\n")
    assert "weavers" not in json.loads(out)["d"].split("friends.", 1)[1]
    clean = json.dumps({"summary": "Weavers met at the Velden fair. Each brought a loom.",
                        "entities": [{"name": "Velden"}, {"name": "Ada Roon"}]})
    assert cut_whole("json_strings", clean) == clean
    prose = 'He said "' + LOOP * 3 + '" twice.'  # quotes outside JSON are no strings
    assert cut_whole("json_strings", prose) == prose


def test_the_rule_has_its_own_key() -> None:
    assert len(set(RULES.values())) == len(RULES)


def test_streamed_cut_equals_whole_reply_cut() -> None:
    reply = json.dumps({"summary": "A spring fair. " + LOOP * 5, "tags": ["a", "b"]})
    whole = cut_whole("json_strings", reply)
    for seed in range(6):
        assert _pieces(reply, seed).text == whole
