"""Repeat-stop: a looping reply ends at its first repeat, a well-behaved reply is untouched,
streamed and whole-reply cuts agree, and the client stops reading the stream there."""

from __future__ import annotations

import asyncio
import json
import random

from pydantic import BaseModel

from memeval.methods.gsw.schemas import OperatorOutput
from memeval.model_access.cache import ResponseCache
from memeval.model_access.chat import ChatModel
from memeval.model_access.repeat_stop import (
    NgramScanner,
    RepeatScanner,
    cut_repeats,
    cut_text_repeats,
)


def _ent(i: int, name: str) -> dict:
    return {"id": f"e{i}", "name": name, "roles": [{"role": "keeper", "states": ["tired"]}]}


def _looping_reply() -> str:
    ents = [_ent(1, "Mira Osk"), _ent(2, "the lighthouse")] + [{"id": f"e{i}", "name": "lamp", "roles": []}
                                                              for i in range(3, 9)]  # a loop counts ids up
    vps = [{"phrase": "Mira lit the lamp", "questions": [{"kind": "who", "question": "Who lit it?",
                                                          "answer_entity_ids": ["e1"]}]}]
    return json.dumps({"entities": ents, "verb_phrases": vps})


def _feed_in_pieces(scanner, text: str, seed: int):
    rng, i, cut = random.Random(seed), 0, None
    while i < len(text) and cut is None:
        n = rng.randint(1, 7)
        cut = scanner.feed(text[i:i + n])
        i += n
    return cut


def test_first_repeated_top_level_item_ends_the_reply_as_valid_json() -> None:
    cut = cut_repeats(_looping_reply())
    assert cut is not None and cut.repeated_in == "entities"
    out = OperatorOutput.model_validate_json(cut.text)
    assert [e.name for e in out.entities] == ["Mira Osk", "the lighthouse", "lamp"]
    assert out.verb_phrases == []  # what came after the loop is not invented


def test_well_behaved_and_nested_repeats_are_untouched() -> None:
    clean = json.dumps({"entities": [_ent(1, "Mira Osk"), _ent(2, "Tobin Vale")],
                        "verb_phrases": [{"phrase": "met", "questions": []}, {"phrase": "left", "questions": []}]})
    assert cut_repeats(clean) is None
    role = {"role": "keeper", "states": []}
    nested = json.dumps({"entities": [{"id": "e1", "name": "Mira", "roles": [role, role]}]})
    assert cut_repeats(nested) is None  # a repeated role inside one entity is not a loop
    same_name_other_roles = json.dumps({"entities": [_ent(1, "Mira"), {"id": "e2", "name": "Mira", "roles": []}]})
    assert cut_repeats(same_name_other_roles) is None  # only a whole repeat (bar the id) is a loop
    same_text_other_list = json.dumps({"entities": [{"id": "e1", "name": "x"}], "links": [{"id": "e1", "name": "x"}]})
    assert cut_repeats(same_text_other_list) is None
    assert cut_repeats("not json {at all") is None


def test_streamed_cut_equals_whole_reply_cut() -> None:
    text = _looping_reply()
    for seed in range(5):
        assert _feed_in_pieces(RepeatScanner(), text, seed) == cut_repeats(text)
    prose = ("Mira kept the old lamp burning on the northern cliff for nine long winters. Then Mira kept "
             "the old lamp burning on the northern cliff for nine long winters again. Tobin came in spring.")
    whole = cut_text_repeats(prose)
    assert whole is not None and whole.text == "Mira kept the old lamp burning on the northern cliff for nine long winters."
    for seed in range(5):
        scanner = NgramScanner()
        streamed = _feed_in_pieces(scanner, prose, seed) or scanner.feed(" ")
        assert streamed == whole
    assert cut_text_repeats("Mira kept the lamp. Tobin mended the boat. They met at dawn.") is None


class _Ents(BaseModel):
    entities: list[dict]
    verb_phrases: list[dict] = []


def test_client_stops_reading_at_the_repeat_and_caches_under_its_own_key(scripted, tmp_path) -> None:
    looping = json.dumps({"entities": [_ent(1, "Mira Osk")] + [_ent(2, "lamp")] * 60})
    scripted.add_rule(r"LOOPTEST", lambda m, r: looping)
    scripted.stream_piece_s = 0.002
    model = ChatModel(model="scripted", base_url=scripted.base_url, api_key_env=None, backoff_base_s=0.01,
                      json_mode="json_object", cache=ResponseCache(tmp_path / "c.sqlite"))
    msgs = [{"role": "user", "content": "LOOPTEST extract"}]

    out, res = asyncio.run(model.complete_json(msgs, _Ents, stop_repeats="json_items"))
    assert [e["name"] for e in out.entities] == ["Mira Osk", "lamp"]
    total_pieces = len(looping.split())
    assert 0 < res.completion_tokens < total_pieces / 10  # the loop was not read to its end
    rec = scripted.requests[-1]
    assert rec["body"]["stream"] is True and rec["pieces_sent"] < total_pieces

    again, res2 = asyncio.run(model.complete_json(msgs, _Ents, stop_repeats="json_items"))
    assert res2.cached and again == out and scripted.count() == 1
    _, plain = asyncio.run(model.complete_json(msgs, _Ents))  # without the rule: its own key, the whole reply
    assert not plain.cached and scripted.count() == 2 and plain.text == looping


def test_gsw_index_key_names_the_rule_only_when_on() -> None:
    from memeval.evaluation.runs.upgrade import index_identity_view
    from memeval.methods.gsw.method import GSW

    GSW_TARGET = "memeval.methods.gsw.method.GSW"  # the class path a config names

    off, on = GSW(services=None, stop_repeats=False), GSW(services=None)  # type: ignore[arg-type]
    assert off.params()["stop_repeats"] is False and on.params()["stop_repeats"] is True  # on: the default
    # indexes built before the rule keep their folder names: off hashes as if the key were absent
    assert "stop_repeats" not in index_identity_view(GSW_TARGET, off.params())
    assert index_identity_view(GSW_TARGET, on.params())["stop_repeats"] is True


def test_a_reply_stored_whole_is_cut_when_read(scripted, tmp_path, monkeypatch) -> None:
    """The Batch API queue stores replies whole; reading one under the rule gives the cut text,
    the same as a streamed call would have (the cut is idempotent on a cut reply)."""
    import memeval.model_access.chat as chat_module

    async def whole_reply(client, req, rule):  # what a batch collection stores: no streaming
        return await client.chat.completions.create(**req)

    looping = _looping_reply()
    scripted.add_rule(r"WHOLETEST", lambda m, r: looping)
    monkeypatch.setattr(chat_module, "streamed_until_repeat", whole_reply)
    model = ChatModel(model="scripted", base_url=scripted.base_url, api_key_env=None, backoff_base_s=0.01,
                      cache=ResponseCache(tmp_path / "c.sqlite"))
    msgs = [{"role": "user", "content": "WHOLETEST extract"}]
    asyncio.run(model.complete(msgs, stop_repeats="json_items"))
    hit = asyncio.run(model.complete(msgs, stop_repeats="json_items"))
    cut = cut_repeats(looping)
    assert hit.cached and cut is not None and hit.text == cut.text
    assert cut_repeats(cut.text) is None and cut_text_repeats(cut_text_repeats(
        "one two three four five six seven eight nine ten eleven twelve. one two three four five six "
        "seven eight nine ten eleven twelve.").text) is None


def test_a_stream_cut_short_is_retried_not_kept(scripted, tmp_path) -> None:
    """A stream that closes without a finish reason is an incomplete reply: retried, never cached."""
    scripted.add_rule(r"SHORTTEST", lambda m, r: "Mira kept the lamp lit. Tobin mended the nets at dawn.")
    scripted.inject("malformed")
    model = ChatModel(model="scripted", base_url=scripted.base_url, api_key_env=None, backoff_base_s=0.01,
                      cache=ResponseCache(tmp_path / "c.sqlite"))
    res = asyncio.run(model.complete([{"role": "user", "content": "SHORTTEST"}], stop_repeats="text_ngrams"))
    assert res.text == "Mira kept the lamp lit. Tobin mended the nets at dawn."
    assert [r["status"] for r in scripted.requests] == ["200-malformed", 200]


def test_a_rule_turned_on_later_reads_the_whole_reply_cut_and_pays_nothing(scripted, tmp_path) -> None:
    """A run begun without a rule and resumed with it: each call it already paid for is read
    from its whole reply, cut as the stream would have been; only calls never made are paid."""
    looping = _looping_reply()
    scripted.add_rule(r"LATERTEST", lambda m, r: looping)
    scripted.add_rule(r"CLEANTEST", lambda m, r: '{"entities": [{"id": "e1", "name": "Mira Osk", "roles": []}]}')
    model = ChatModel(model="scripted", base_url=scripted.base_url, api_key_env=None, backoff_base_s=0.01,
                      cache=ResponseCache(tmp_path / "c.sqlite"))
    loop_msgs, clean_msgs = [{"role": "user", "content": "LATERTEST"}], [{"role": "user", "content": "CLEANTEST"}]
    whole = asyncio.run(model.complete(loop_msgs))
    clean = asyncio.run(model.complete(clean_msgs))
    assert whole.text == looping and scripted.count() == 2
    cut = asyncio.run(model.complete(loop_msgs, stop_repeats="json_items"))
    same = asyncio.run(model.complete(clean_msgs, stop_repeats="json_items"))
    assert cut.cached and cut.text == cut_repeats(looping).text != looping
    assert same.cached and same.text == clean.text
    assert scripted.count() == 2  # nothing paid
    fresh = asyncio.run(model.complete([{"role": "user", "content": "LATERTEST again"}], stop_repeats="json_items"))
    assert not fresh.cached and scripted.count() == 3
