"""Repeat-stop for replies whose nested number lists count on (rule json_counts): a list that holds
16 bare numbers in a row and goes on ends the reply there, closed and valid, with everything before
it; shorter lists, a list that ends at 16, and lists of names are untouched; json_runs' and
json_strings' cuts still apply. The shape is Graphiti's stored 1.5B edge replies on EpBench-20
(an `episode_indices` list counting into the hundreds); the texts are invented."""

from __future__ import annotations

import json

from conftest import streamed_cuts

from memeval.model_access.repeat_stop import RULES, cut_by, cut_whole


def _edges(indices: list[int]) -> dict:
    return {"extracted_entities": [{"name": "Ada Roon", "entity_type_id": 0}],
            "edges": [{"source_entity_name": "Ada Roon", "target_entity_name": "Velden Fair",
                       "relation_type": "VISITS", "fact": "Ada Roon visited the Velden Fair.",
                       "episode_indices": indices}]}


def test_a_nested_list_counting_past_sixteen_numbers_ends_the_reply_closed() -> None:
    counting = [0, 3, 4, 5, *range(9, 400)]
    reply = json.dumps(_edges(counting), indent=2)[:2100]  # max_tokens cut it mid-list
    out = json.loads(cut_whole("json_counts", reply))
    assert out == _edges(counting[:16])
    assert cut_by("json_runs", reply) is None  # json_runs reads top-level items only: no cut, invalid JSON


def test_short_lists_a_list_that_ends_at_sixteen_and_mixed_lists_are_untouched() -> None:
    for indices in ([0], [0, 1], list(range(16))):
        reply = json.dumps(_edges(indices))
        assert cut_whole("json_counts", reply) == reply
    mixed = json.dumps({"values": [*range(10), "eleven", *range(12, 20)]})  # never 16 numbers in a row
    assert cut_whole("json_counts", mixed) == mixed
    names = json.dumps({"names": [f"stall {i}" for i in range(40)]})
    assert cut_whole("json_counts", names) == names
    floats = json.dumps({"scores": [0.5 + i for i in range(30)]})  # numbers of any form count
    assert json.loads(cut_whole("json_counts", floats)) == {"scores": [0.5 + i for i in range(16)]}


def test_the_other_json_rules_still_cut() -> None:
    loop = "The fair is a place where weavers can meet and share their patterns with friends. "
    reply = json.dumps({"summary": "A spring fair. " + loop * 5})
    assert cut_whole("json_counts", reply) == cut_whole("json_strings", reply) != reply
    counting = json.dumps({"nodes": [{"id": f"Fair_{i}", "name": f"Velden Fair, {i}"} for i in range(20)]})
    assert cut_whole("json_counts", counting) == cut_whole("json_runs", counting) != counting
    assert len(set(RULES.values())) == len(RULES)  # every rule keys its calls apart


def test_streamed_cut_equals_whole_reply_cut() -> None:
    reply = json.dumps(_edges(list(range(200))), indent=1)
    assert set(streamed_cuts("json_counts", reply)) == {cut_whole("json_counts", reply)} != {reply}
