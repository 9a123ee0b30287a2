"""SEEM fusion against the real model's stored verdicts (issue 26): the judged pairs of the
v1 bundles (tests/fixtures/seem_stored_pairs.json, written by scripts/seem_fusion_audit.py
from the bundles' calls, which tests/fixtures/v1_bundles keeps) merged on the level alone, three with a reason saying "different
event", and one joined a workshop in May with a fashion show in September. Today's veto keeps
those pairs from the judge, the version-3 verdict refuses a reply that contradicts itself, and
the saved runs' version 2 still merges them as it did (their replay must not change)."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import v1_bundle
from scripted_server import ScriptedServer

from memeval.methods.seem import verdict as verdicts
from memeval.methods.seem.frames import Frame
from memeval.methods.seem.fusion import Fusion, Memory, decision_counts, embed_frames
from memeval.methods.seem.prompts import judge_messages
from memeval.methods.seem.schemas import FusionVerdict
from memeval.methods.seem.veto import compatible, conflict, dates_in
from memeval.model_access.cache import ResponseCache, cache_key
from memeval.model_access.chat import ChatModel
from memeval.model_access.embed import OpenAICompatibleEmbedder

ROOT = Path(__file__).resolve().parents[1]
STORED = json.loads((ROOT / "tests" / "fixtures" / "seem_stored_pairs.json").read_text(encoding="utf-8"))
PAIRS = [(bundle, p) for bundle, b in STORED["bundles"].items() for p in b["pairs"]]


def _name(p: dict[str, Any]) -> str:
    return f"{p['new']['id']}->{p['existing']['id']}"


def _written(bundle: str) -> dict[str, list[tuple]]:
    return {k: [tuple(x) for x in v] for k, v in STORED["bundles"][bundle]["written"].items()}


def test_the_fixture_holds_the_bundles_real_judge_calls() -> None:
    """Each pair's frames, put into the version-2 judge request as the run's client built it,
    hash to a key of the bundle's calls whose stored reply is the fixture's: the frames are the
    ones the judge read and the replies are the real model's."""
    for bundle, b in STORED["bundles"].items():
        with gzip.open(v1_bundle(bundle) / "calls.jsonl.gz", "rt", encoding="utf-8") as fh:
            calls = {r["key"]: r["value"]["text"] for r in map(json.loads, fh) if "text" in r["value"]}
        m = b["model"]
        llm = ChatModel(m["model"], api_key_env=None, model_revision=m["model_revision"], json_mode=m["json_mode"],
                        cache=ResponseCache(None))
        for p in b["pairs"]:
            msgs = judge_messages(Frame.from_json(p["existing"]).text(), Frame.from_json(p["new"]).text(), 2)
            req = llm._request(msgs, m["judge_max_tokens"], llm._response_format(FusionVerdict))
            assert cache_key(llm._key_payload(req)) == p["key"], (bundle, _name(p))
            assert calls[p["key"]] == p["reply"]
    assert len(PAIRS) == 13 and all(p["merged"] for _, p in PAIRS)


def test_version_2_still_merges_the_stored_pairs_on_their_level_alone() -> None:
    """What the saved runs did, and their replay must keep doing: every stored verdict was
    "moderate" and merged, including the three whose reason says the frames differ."""
    read = [verdicts.read(FusionVerdict.model_validate_json(p["reply"])) for _, p in PAIRS]
    assert all(v.merge and v.level == "moderate" and v.record() == {} for v in read)
    assert sum(bool(verdicts.CONTRADICTS.search(v.reason)) for v in read) == 3


def _clients(server: ScriptedServer) -> tuple[ChatModel, OpenAICompatibleEmbedder]:
    cache = ResponseCache(None)
    return (ChatModel("scripted", base_url=server.base_url, api_key_env=None, cache=cache),
            OpenAICompatibleEmbedder("hashed", base_url=server.base_url, api_key_env=None, cache=cache))


def _fuse(server: ScriptedServer, bundle: str, pair: dict[str, Any], **settings: Any) -> Memory:
    """The stored pair through Fusion.add: the frame in memory meets the new one (every
    similarity passes: the verdict, or the veto, decides)."""
    llm, emb = _clients(server)
    fusion = Fusion(llm, emb, threshold=-1.0, **settings)
    old, new = Frame.from_json(pair["existing"]), Frame.from_json(pair["new"])
    order = {p: int(p.split("#")[0]) for p in [*old.provenance, *new.provenance]}

    async def go() -> Memory:
        memory = Memory(frames=[old], next_id=99)
        memory.vectors = await embed_frames(emb, [old])
        await fusion.add(memory, new, order, "batch", _written(bundle))
        return memory

    return asyncio.run(go())


def _judge_calls(server: ScriptedServer) -> int:
    return sum("[SEEM:fuse-judge]" in json.dumps(r["body"]) for r in server.requests)


@pytest.mark.parametrize(("bundle", "pair"), PAIRS, ids=[f"{b.split('-')[0]}-{_name(p)}" for b, p in PAIRS])
def test_the_stored_pairs_under_the_saved_settings_and_under_todays(bundle: str, pair: dict[str, Any]) -> None:
    """Served its real stored reply, each pair merges under version 2 without the veto (the saved
    runs); under today's settings the veto keeps 11 of the 13 from the judge, among them the
    EpBench workshop/fashion-show pair and all three merges whose reason said "different event"."""
    stored = pair["reply"]
    with ScriptedServer() as server:
        server.add_rule(r"\[SEEM:fuse-judge\]", lambda m, r: stored)
        saved = _fuse(server, bundle, pair, prompt_version=2, veto_days=None)
        assert saved.decisions[0]["merged"] and _judge_calls(server) == 1
    with ScriptedServer() as server:
        today = _fuse(server, bundle, pair, prompt_version=3, veto_days=3)
        vetoed = [v["veto"] for v in today.vetoed]
        if _name(pair) in {"F5->F1", "F19->F2"}:  # dates 2 days apart: these reach the judge
            assert not vetoed and _judge_calls(server) >= 1
            return
        assert vetoed == ["dates"] and _judge_calls(server) == 0 and not today.decisions
        assert len(today.frames) == 2  # nothing merged
        assert today.vetoed[0]["texts"]["existing"] == Frame.from_json(pair["existing"]).text()
        if verdicts.CONTRADICTS.search(json.loads(stored)["reason"]) or bundle.startswith("epbench"):
            assert _name(pair) in {"F12->F2", "F9->F1", "F11->F6", "F14->F6"}


def test_the_workshop_in_may_is_not_the_fashion_show_in_september() -> None:
    """The EpBench merge: chapter 12's frame has no event (its date comes from the chapter's text,
    "May 11, 2026"), chapter 2's events are dated 2026-09-22."""
    (pair,) = STORED["bundles"]["epbench20-local"]["pairs"]
    old, new = Frame.from_json(pair["existing"]), Frame.from_json(pair["new"])
    assert not new.events and _written("epbench20-local")["12"] == [(2026, 5, 11)]
    assert conflict(old, new, 3, _written("epbench20-local")) == "dates"
    assert conflict(old, new, 3, None) is None  # without the written dates nothing would say so


def _v3(reason: str, **slots: str) -> str:
    reply = {"same_participants": "yes", "same_time": "yes", "same_place": "unclear", "same_event": "yes",
             "level": "moderate", "reason": reason}
    return json.dumps({**reply, **slots})


def test_a_version_3_reply_that_contradicts_itself_does_not_merge() -> None:
    """The three stored reasons that said "different event", written into a version-3 reply that
    claims one event: refused and recorded, with the check and the texts the judge read."""
    bundle = "locomo-local"
    bad = [p for b, p in PAIRS if b == bundle and verdicts.CONTRADICTS.search(json.loads(p["reply"])["reason"])]
    assert [_name(p) for p in bad] == ["F9->F1", "F11->F6", "F14->F6"]
    for pair in bad:
        reason = json.loads(pair["reply"])["reason"]
        with ScriptedServer() as server:
            server.add_rule(r"\[SEEM:fuse-judge\]", lambda m, r, reason=reason: _v3(reason))
            memory = _fuse(server, bundle, pair, prompt_version=3, veto_days=None)
        (d,) = memory.decisions
        assert not d["merged"] and d["refused"] == "reason_says_different" and len(memory.frames) == 2
        assert d["check"]["same_event"] == "yes" and set(d["texts"]) == {"existing", "new"}
        assert decision_counts(memory.decisions)["refused"] == {"reason_says_different": 1}


@pytest.mark.parametrize(("slots", "refused"), [({"same_event": "no"}, "not_same_event"),
                                                ({"same_time": "no"}, "slot_says_no"),
                                                ({"level": "weak"}, "weak"), ({}, None)])
def test_version_3_merges_only_when_every_part_of_the_reply_agrees(slots: dict[str, str], refused: str | None) -> None:
    v = verdicts.read(verdicts.SCHEMAS[3].model_validate_json(_v3("One dinner, told twice.", **slots)))
    assert v.refused == refused and v.merge == (refused is None)


def test_dates_written_in_many_ways_and_compared_with_a_tolerance() -> None:
    assert dates_in("2031-04-09 (last Sunday)") == [(2031, 4, 9)]
    assert dates_in("On May 11, 2026 and 3 June 2026; in March 2027.") == [(2026, 5, 11), (2026, 6, 3), (2027, 3, None)]
    assert dates_in("September 22") == [(None, 9, 22)] and dates_in("next month, 10:43 am") == []
    assert compatible((2031, 4, 9), (2031, 4, 11), 3) and not compatible((2031, 4, 9), (2031, 4, 14), 3)
    assert compatible((2031, 4, None), (2031, 4, 30), 0)  # a month holds its days
    assert compatible((None, 4, 9), (2031, 4, 9), 0) and not compatible((2030, 4, 9), (2031, 4, 9), 3)


def test_participants_conflict_only_when_both_name_people_and_share_none() -> None:
    def f(people: list[str], time: str = "") -> Frame:
        return Frame("F", "", [{"participants": people, "action": "met", "time": time}], ["1"])

    assert conflict(f(["Lena Voss"]), f(["Piet Aalders"]), 3) == "participants"
    assert conflict(f(["Lena Voss", "Piet"]), f(["Piet Aalders"]), 3) is None  # "Piet" is Piet Aalders
    assert conflict(f(["Lena Voss"]), f([]), 3) is None
    assert conflict(f(["Lena Voss"], "2031-04-09"), f(["Lena Voss"], "2031-05-20"), 3) == "dates"
