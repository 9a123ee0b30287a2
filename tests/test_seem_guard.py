"""SEEM's output guard: values copied from the prompt's worked example, and names the passage
never mentions, are dropped and counted (a 0.5B model copied the example into every frame)."""

from __future__ import annotations

from memeval.methods.seem.guard import guard_facts, guard_frame
from memeval.methods.seem.prompts import EXAMPLE_FRAME, frame_messages

PASSAGE = ("Lena Voss: We finally repainted the boathouse on Saturday.\n"
           "Piet Aalders: It looked great at the regatta!")


def test_copied_example_event_is_dropped_and_real_event_kept() -> None:
    reply = {"summary": "Lena Voss repainted the boathouse.",
             "events": [EXAMPLE_FRAME["events"][0],
                        {"participants": ["Lena Voss", "Mira Tolk"], "action": "repainted the boathouse",
                         "time": "", "time_raw": "on Saturday", "location": "her garage",
                         "reason": "", "method": "with tape and fishing line"}]}
    out, counts = guard_frame(reply, PASSAGE)
    assert [e["action"] for e in out["events"]] == ["repainted the boathouse"]
    kept = out["events"][0]
    assert kept["participants"] == ["Lena Voss"]          # the example's person is not in the passage
    assert kept["location"] == "" and kept["method"] == ""  # copied slot values cleared
    assert kept["time_raw"] == "on Saturday"
    assert counts == {"events_dropped": 1, "participants_dropped": 1, "values_dropped": 2,
                      "replies_guarded": 1}


def test_a_value_the_passage_really_contains_is_kept() -> None:
    text = "Mira Tolk works at Harbour Bakery in her garage."  # the example's words, really present
    reply = {"summary": "", "events": [{"participants": ["Mira Tolk"], "action": "works at Harbour Bakery",
                                        "location": "her garage"}]}
    out, counts = guard_frame(reply, text)
    assert out["events"][0]["location"] == "her garage" and not counts


def test_facts_need_both_ends_in_the_passage() -> None:
    facts = [{"subject": "Lena Voss", "predicate": "repainted", "object": "boathouse", "time": ""},
             {"subject": "Mira Tolk", "predicate": "will work at", "object": "Harbour Bakery", "time": ""},
             {"subject": "Lena Voss", "predicate": "met", "object": "Gustav", "time": ""}]
    kept, counts = guard_facts(facts, PASSAGE)
    assert [f["object"] for f in kept] == ["boathouse"] and counts == {"facts_dropped": 2}


def test_the_example_is_a_separate_turn_and_the_passage_comes_last() -> None:
    msgs = frame_messages("Passage text here", "2024-01-02")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert "Mira Tolk" not in msgs[0]["content"] and msgs[-1]["content"].endswith("Passage text here")


def test_a_summary_naming_the_examples_person_is_dropped() -> None:
    reply = {"summary": "Mira Tolk and Lena Voss repaint the boathouse.",
             "events": [{"participants": ["Lena Voss"], "action": "repainted the boathouse"}]}
    out, counts = guard_frame(reply, PASSAGE)
    assert out["summary"] == "" and counts["summaries_dropped"] == 1
    assert out["events"][0]["action"] == "repainted the boathouse"
