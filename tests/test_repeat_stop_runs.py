"""Repeat-stop for graph replies whose lists count up (rule json_runs): the 4th consecutive item
alike but for its digits ends the reply, the JSON closed and valid with what came before; shorter
runs, a node named twice then the edges, and distinct items are untouched; string loops are still
cut. The shapes are those of cognee's stored 1.5B replies on EpBench-20; the texts are invented."""

from __future__ import annotations

import json

from conftest import streamed_cuts

from memeval.model_access.repeat_stop import RULES, cut_by, cut_whole

HEAD = [{"id": "Ada_Roon", "name": "Ada Roon", "type": "Person", "description": "A weaver from Velden."},
        {"id": "Velden", "name": "Velden", "type": "Place", "description": "A valley town."}]


def _counting(n: int) -> list[dict]:
    return [{"id": f"Velden_Fair_2031_{i}", "name": f"Velden Loom Fair, 2031, {i}", "type": "Event"}
            for i in range(20, 20 + n)]


def test_a_list_that_counts_up_is_cut_before_its_fourth_item_and_closed() -> None:
    reply = json.dumps({"nodes": HEAD + _counting(30)}, indent=2)[:-400]  # max_tokens cut it mid-item
    out = json.loads(cut_whole("json_runs", reply))
    assert out == {"nodes": HEAD + _counting(3)}


def test_identical_items_in_a_row_and_timestamps_that_count_are_runs_too() -> None:
    sculpture = {"id": "Ice_Swan", "name": "Ice Swan", "type": "Work", "description": "A carved swan of ice."}
    reply = json.dumps({"nodes": [*HEAD, *[sculpture] * 9]})
    assert json.loads(cut_whole("json_runs", reply)) == {"nodes": [*HEAD, *[sculpture] * 3]}
    stamps = [{"id": f"fair_time_{i}", "name": f"2031-04-02 {i:02d}:00:00", "type": "Timestamp",
               "description": f"The poster read: April 02, 2031 at {i:02d}:00:00."} for i in range(6, 18)]
    out = json.loads(cut_whole("json_runs", json.dumps({"nodes": HEAD + stamps})))
    assert out["nodes"] == HEAD + stamps[:3]


def test_short_runs_distinct_items_and_a_node_named_twice_before_the_edges_are_untouched() -> None:
    node = HEAD[1]
    graph = json.dumps({"nodes": [*HEAD, *_counting(3), {"id": "Bo_Lind", "name": "Bo Lind", "type": "Person"}, node],
                        "edges": [{"source_node_id": "Ada_Roon", "target_node_id": "Velden", "relationship_name": "lives_in"},
                                  {"source_node_id": "Bo_Lind", "target_node_id": "Velden", "relationship_name": "visits"}]})
    assert cut_by("json_runs", graph) is None
    people = json.dumps({"nodes": [{"id": n, "name": n, "type": "Person"} for n in ("Ada", "Bo", "Cy", "Di", "Ed")]})
    assert cut_whole("json_runs", people) == people
    # the items of a nested list are no run: a node's aliases may count
    nested = json.dumps({"nodes": [{"id": "x", "aliases": [f"stall {i}" for i in range(8)]}]})
    assert cut_whole("json_runs", nested) == nested


def test_a_looping_string_is_still_cut_and_the_rule_has_its_own_key() -> None:
    loop = "The fair is a place where weavers can meet and share their patterns with friends. "
    reply = json.dumps({"summary": "A spring fair. " + loop * 5})
    assert cut_whole("json_runs", reply) == cut_whole("json_strings", reply) != reply
    assert RULES["json_runs"] not in (RULES["json_strings"], RULES["json_items"])


def test_streamed_cut_equals_whole_reply_cut() -> None:
    reply = json.dumps({"nodes": HEAD + _counting(12)}, indent=2)
    assert set(streamed_cuts("json_runs", reply)) == {cut_whole("json_runs", reply)} != {reply}


def _memory(i: int, text: str) -> dict:
    return {"id": str(i), "text": text, "attributed_to": "user"}


def test_a_memory_list_that_cycles_is_cut_by_json_items_not_by_json_runs() -> None:
    """mem0's 1.5B memory replies (LoCoMo, 2026-12-06) loop in cycles as well as runs, ids counting
    up, to the reply ceiling. json_runs sees no run of 4 in a cycle and leaves the reply cut off,
    invalid (mem0 then stores nothing of it); json_items ends it at the first repeated memory,
    valid, every memory before it kept. The texts are invented."""
    cycle = ["Ada opened a pottery studio", "Ada lost her job at the mill", "Ada plans a kiln sale",
             "Ada sells bowls online"]
    items = [_memory(i, cycle[i % 4]) for i in range(40)]
    reply = json.dumps({"memory": items}, indent=2)[:-300]  # the ceiling cut it mid-item
    assert cut_by("json_runs", reply) is None
    out = json.loads(cut_whole("json_items", reply))
    assert out == {"memory": items[:4]}
