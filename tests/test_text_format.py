"""Structured replies in a text layout (model_access.text_format, ChatModel.complete_format): the
grammar travels in llama.cpp's `grammar` field only where the endpoint takes it, a refused reply
is repaired with the decoder's message, the line-block repeat rule cuts a looping reply the same
way streamed and whole, and a dry run answers with a placeholder in the layout."""

from __future__ import annotations

import asyncio
import random

import pytest

from memeval.methods.gsw import wire
from memeval.methods.gsw.schemas import OperatorOutput
from memeval.model_access.cache import ResponseCache
from memeval.model_access.chat import ChatModel
from memeval.model_access.errors import ConfigError, JsonOutputError
from memeval.model_access.repeat_stop import LineBlockScanner, cut_whole
from memeval.model_access.text_format import sdk_arguments

GOOD = "e1 Mira Osk\n r keeper\nv lit the lamp\n who Who lit the lamp? = e1\n"


def _model(server, tmp_path, **kw) -> ChatModel:
    return ChatModel(model="scripted", base_url=server.base_url, api_key_env=None, backoff_base_s=0.01,
                     cache=ResponseCache(tmp_path / "c.sqlite"), **kw)


def test_the_grammar_is_sent_only_to_endpoints_that_take_grammars(scripted, tmp_path) -> None:
    scripted.add_rule(r"FMTTEST", lambda m, r: GOOD)
    msgs = [{"role": "user", "content": "FMTTEST map"}]
    out, _ = asyncio.run(_model(scripted, tmp_path, grammar="gbnf").complete_format(msgs, wire.OPERATOR_FORMAT))
    body = scripted.requests[-1]["body"]
    assert body["grammar"] == wire.OPERATOR_FORMAT.grammar and "response_format" not in body
    assert out == wire.decode_operator(GOOD)
    # auto: a remote endpoint (no local llama.cpp server spec) gets plain text, under its own key
    out2, res = asyncio.run(_model(scripted, tmp_path, grammar="auto").complete_format(msgs, wire.OPERATOR_FORMAT))
    assert not res.cached and "grammar" not in scripted.requests[-1]["body"] and out2 == out
    assert ChatModel(model="m", api_key_env=None, server=object()).takes_grammars  # a local llama.cpp
    assert not ChatModel(model="m", api_key_env=None, server=object(), grammar="none").takes_grammars
    with pytest.raises(ConfigError, match="grammar"):
        ChatModel(model="m", grammar="regex")
    assert sdk_arguments({"model": "m", "grammar": "g"}) == {"model": "m", "extra_body": {"grammar": "g"}}


def test_a_refused_reply_is_repaired_with_the_line_the_decoder_names(scripted, tmp_path) -> None:
    replies = iter(["e1 Mira Osk\n q Who lit it?\n", GOOD])
    scripted.add_rule(r"REPAIRTEST", lambda m, r: next(replies))
    msgs = [{"role": "user", "content": "REPAIRTEST map"}]
    out, _ = asyncio.run(_model(scripted, tmp_path).complete_format(msgs, wire.OPERATOR_FORMAT))
    assert out == wire.decode_operator(GOOD)
    repair = scripted.requests[-1]["body"]["messages"]
    assert repair[1] == {"role": "assistant", "content": "e1 Mira Osk\n q Who lit it?\n"}
    assert "line 2" in repair[2]["content"] and "unknown line start 'q'" in repair[2]["content"]
    scripted.add_rule(r"NEVERTEST", lambda m, r: "Here is the map you asked for.")
    with pytest.raises(JsonOutputError, match=r"no valid OperatorOutput reply \(gsw-lines/1 operator\) after 3"):
        asyncio.run(_model(scripted, tmp_path).complete_format([{"role": "user", "content": "NEVERTEST"}],
                                                               wire.OPERATOR_FORMAT))


def _looping_lines() -> str:
    loop = "".join(f"e{i} lamp\n r light\n" for i in range(3, 40))  # a loop counts ids up
    return "e1 Mira Osk\n r keeper\n r guest\ne2 Tobin Vale\n r guest\n" + loop + "v lit the lamp\n"


def test_a_looping_line_reply_ends_before_its_first_repeated_block() -> None:
    text = _looping_lines()
    cut = cut_whole("line_blocks", text)
    assert cut == "e1 Mira Osk\n r keeper\n r guest\ne2 Tobin Vale\n r guest\ne3 lamp\n r light\n"
    assert [e.name for e in wire.decode_operator(cut).entities] == ["Mira Osk", "Tobin Vale", "lamp"]
    assert cut_whole("line_blocks", cut) == cut  # idempotent: a cached cut reply reads the same
    for seed in range(5):  # streamed in pieces: the same cut
        rng, scanner, i, got = random.Random(seed), LineBlockScanner(), 0, None
        while i < len(text) and got is None:
            n = rng.randint(1, 9)
            got = scanner.feed(text[i:i + n])
            i += n
        assert (got or scanner.finish()).text == cut
    # untouched: shared sub-lines (two guests), the same name with other roles, a repeat at the end
    clean = "e1 Mira\n r guest\ne2 Tobin\n r guest\ne3 Mira\n r host\nv met\n who Who met? = e1\nv left\n"
    assert cut_whole("line_blocks", clean) == clean
    tail = "e1 Mira\n r guest\ne2 Mira\n r guest"  # no newline at the end: the last block still counts
    assert cut_whole("line_blocks", tail) == "e1 Mira\n r guest\n"


def test_client_streams_a_line_reply_and_stops_at_the_repeat(scripted, tmp_path) -> None:
    scripted.add_rule(r"LINELOOP", lambda m, r: _looping_lines())
    scripted.stream_piece_s = 0.002
    model = _model(scripted, tmp_path, grammar="gbnf")
    msgs = [{"role": "user", "content": "LINELOOP map"}]
    out, res = asyncio.run(model.complete_format(msgs, wire.OPERATOR_FORMAT, stop_repeats="line_blocks"))
    assert [e.name for e in out.entities] == ["Mira Osk", "Tobin Vale", "lamp"]
    rec = scripted.requests[-1]
    assert rec["body"]["stream"] is True and rec["body"]["grammar"] == wire.OPERATOR_FORMAT.grammar
    assert rec["pieces_sent"] < len(_looping_lines().split()) / 2


def test_a_dry_run_answers_a_text_format_call_with_a_decodable_placeholder() -> None:
    from memeval.model_access.dry import DryRecorder
    from memeval.model_access.gate import CallSettings

    rec = DryRecorder(output_ratio={})
    model = ChatModel(model="m", api_key_env=None, settings=CallSettings(dry=rec))
    out, res = asyncio.run(model.complete_format([{"role": "user", "content": "Passage: Mira Osk met Tobin Vale."}],
                                                 wire.OPERATOR_FORMAT))
    assert isinstance(out, OperatorOutput) and len(out.entities) == 2 and len(rec.records) == 1
    assert wire.decode_operator(res.text) == out
