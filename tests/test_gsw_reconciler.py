"""The GSW Reconciler on hand-built chunk workspaces (no server, no model): fast."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from scripted_server import hashed_embedding  # noqa: E402

from memeval.datasets.types import Unit  # noqa: E402
from memeval.methods.gsw.operator import OperatorStages, StageSettings, make_chunks, outputs_of  # noqa: E402
from memeval.methods.gsw.qa import NameMatcher  # noqa: E402
from memeval.methods.gsw.reconciler import Reconciler, chunk_workspace  # noqa: E402
from memeval.methods.gsw.render import to_dot  # noqa: E402
from memeval.methods.gsw.schemas import OperatorOutput, SpaceTimeOutput  # noqa: E402
from memeval.methods.gsw.workspace import (  # noqa: E402
    ChunkRecord,
    Workspace,
    entity_facts,
    render_entity,
    render_text,
)
from memeval.model_access.chat import ChatResult  # noqa: E402
from memeval.model_access.errors import JsonOutputError  # noqa: E402


class FakeLLM:
    """complete_json answers from a function of the user message; records every call."""

    def __init__(self, reply: Any = None):
        self.reply = reply or (lambda kind, user: {"answers": []})
        self.calls: list[str] = []

    async def complete_json(self, messages: list[dict[str, str]], model: Any, max_tokens: int | None = None,
                            stop_repeats: str | None = None):
        kind = messages[0]["content"].split("]")[0].lstrip("[")
        user = messages[-1]["content"]
        self.calls.append(kind)
        return model.model_validate(self.reply(kind, user)), None


class FakeEmbedder:
    async def embed(self, texts: list[str], input_type: str = "document") -> np.ndarray:
        return np.array([hashed_embedding(t) for t in texts], dtype=np.float32)


def chunk(cid: str, entities: list[tuple[str, str, str, list[str]]], verbs: list[dict] | None = None,
          links: list[dict] | None = None, text: str = "") -> Workspace:
    """A chunk workspace from (id, name, role, states) entities, Operator-style verbs and links;
    the default text mentions every entity, role and state, so the output guard keeps them."""
    chapter, idx = cid.rsplit(".", 1)
    text = text or " ".join(f"{n} was there ({r}; {', '.join(s)})." for _, n, r, s in entities) or f"text of {cid}"
    rec = ChunkRecord(id=cid, chapter=chapter, index=int(idx), text=text)
    op = OperatorOutput.model_validate({
        "entities": [{"id": i, "name": n, "roles": [{"role": r, "states": s}]} for i, n, r, s in entities],
        "verb_phrases": verbs or []})
    st = SpaceTimeOutput.model_validate({"links": links or []})
    return chunk_workspace(rec, op, st)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_entity_merge_keeps_role_history_stamped_by_chunk() -> None:
    ws = Workspace(scope="1")
    rec = Reconciler(ws, forward_falling=False)
    run(rec.add(chunk("1.0", [("e1", "Ezra Edwards", "participant", ["nervous"]),
                              ("e2", "The Museum", "venue", [])])))
    run(rec.add(chunk("1.1", [("e1", "ezra  edwards.", "winner", ["proud"]), ("e2", "museum", "venue", ["busy"])])))
    assert len(ws.entities) == 2
    ezra = ws.find("Ezra Edwards")
    assert ezra is not None
    assert [(r.role, r.states, r.chunk) for r in ezra.roles] == [
        ("participant", ["nervous"], "1.0"), ("winner", ["proud"], "1.1")]
    assert ezra.chunks == ["1.0", "1.1"]
    assert ezra.aliases == []  # same normalised name: not a new alias
    assert ws.find("museum") is ws.find("The Museum")
    assert rec.stats["entities_merged"] == 2
    assert ws.chunks[1].id_map == {"e1": ezra.id, "e2": ws.find("museum").id}


def test_space_time_value_propagates_to_co_linked_entity() -> None:
    ws = Workspace(scope="1")
    rec = Reconciler(ws, forward_falling=False)
    run(rec.add(chunk("1.0", [("e1", "Ava Stone", "guide", []), ("e2", "Ben Cole", "visitor", [])],
                      links=[{"kind": "space", "value": "Central Park", "entity_ids": ["e1", "e2"]},
                             {"kind": "time", "value": "March 1, 2024", "entity_ids": ["e1", "e2"]}])))
    ava, ben = ws.find("Ava Stone"), ws.find("Ben Cole")
    assert ava.space == ben.space and ws.current(ben.id, "space") == "Central Park"
    # Ava alone moves to the museum in a later chunk: her chunk node merges with the shared node
    run(rec.add(chunk("1.1", [("e1", "Ava Stone", "guide", [])],
                      links=[{"kind": "space", "value": "Metropolitan Museum", "entity_ids": ["e1"]}])))
    assert ws.current(ben.id, "space") == "Metropolitan Museum"  # propagated to Ben
    node = ws.node_of(ben.id, "space")
    assert [(s.value, s.chunk) for s in node.history] == [("Central Park", "1.0"), ("Metropolitan Museum", "1.1")]
    assert node.history[1].via == [ava.id]
    assert ws.current(ben.id, "time") == "March 1, 2024"  # the time node was not touched
    ev = [e for e in ws.events if e["event"] == "space_propagated"]
    assert ev and ev[-1]["to"] == [ben.id] and ev[-1]["value"] == "Metropolitan Museum"
    facts = entity_facts(ws, ben.id)
    assert "[1.1] place: Metropolitan Museum (shared with linked entities)" in facts


def test_space_nodes_merge_when_their_entities_meet() -> None:
    """Ava was at the Park and Cy at the Library; they meet at the Cafe. One node from then on,
    but neither inherits the other's past: Ava was never at the Library."""
    ws = Workspace(scope="1")
    rec = Reconciler(ws, forward_falling=False)
    run(rec.add(chunk("1.0", [("e1", "Ava Stone", "guide", [])],
                      links=[{"kind": "space", "value": "Park", "entity_ids": ["e1"]}])))
    run(rec.add(chunk("1.1", [("e1", "Cy Dale", "chef", [])],
                      links=[{"kind": "space", "value": "Library", "entity_ids": ["e1"]}])))
    assert len(ws.nodes) == 2
    run(rec.add(chunk("1.2", [("e1", "Ava Stone", "guide", []), ("e2", "Cy Dale", "chef", [])],
                      links=[{"kind": "space", "value": "Cafe", "entity_ids": ["e1", "e2"]}])))
    assert len(ws.nodes) == 1
    node = next(iter(ws.nodes.values()))
    ava, cy = ws.find("Ava Stone").id, ws.find("Cy Dale").id
    assert sorted(node.entities) == sorted([ava, cy])
    assert node.merged_from and rec.stats["nodes_merged"] == 1
    assert [s.value for s in ws.stamps(ava, "space")] == ["Park", "Cafe"]
    assert [s.value for s in ws.stamps(cy, "space")] == ["Library", "Cafe"]
    assert not any("Library" in f for f in entity_facts(ws, ava))
    assert not any("Park" in f for f in entity_facts(ws, cy))
    # a value arriving after the merge reaches both
    run(rec.add(chunk("1.3", [("e1", "Cy Dale", "chef", [])],
                      links=[{"kind": "space", "value": "Pier", "entity_ids": ["e1"]}])))
    assert ws.current(ava, "space") == "Pier" and [s.value for s in ws.stamps(ava, "space")] == ["Park", "Cafe", "Pier"]


def test_null_link_joins_and_only_later_values_propagate() -> None:
    """The `space_time_join: since` ablation (the rule before issue 26): Ben is seen with Ava
    where no place is named (a null-valued link): he does not inherit Ava's earlier Park, but
    the Museum she reaches afterwards reaches him."""
    ws = Workspace(scope="1")
    rec = Reconciler(ws, forward_falling=False, space_time_join="since")
    run(rec.add(chunk("1.0", [("e1", "Ava Stone", "guide", [])],
                      links=[{"kind": "space", "value": "Park", "entity_ids": ["e1"]}])))
    run(rec.add(chunk("1.1", [("e1", "Ava Stone", "guide", []), ("e2", "Ben Cole", "visitor", [])],
                      links=[{"kind": "space", "value": None, "entity_ids": ["e1", "e2"]},
                             {"kind": "time", "value": "unknown", "entity_ids": ["e1", "e2"]}])))
    ava, ben = ws.find("Ava Stone").id, ws.find("Ben Cole").id
    assert ws.entities[ben].space == ws.entities[ava].space  # linked although no place was named
    assert ws.current(ben, "space") is None and ws.current(ava, "space") == "Park"
    assert ws.entities[ben].time is not None and not any(n.history for n in ws.nodes.values() if n.kind == "time")
    run(rec.add(chunk("1.2", [("e1", "Ava Stone", "guide", [])],
                      links=[{"kind": "space", "value": "Museum", "entity_ids": ["e1"]}])))
    assert ws.current(ben, "space") == "Museum"
    assert [(s.value, s.chunk) for s in ws.stamps(ben, "space")] == [("Museum", "1.2")]
    assert entity_facts(ws, ben) == ["[1.1] role: visitor", "[1.2] place: Museum (shared with linked entities)"]


def test_two_place_groups_sharing_an_entity_stay_apart() -> None:
    """In one chunk Ava and Ben are in the kitchen, then Ben and Cy in the garden: Ben moved on;
    Ava stays in the kitchen and Cy in the garden (no one node with the last value for all)."""
    ws = Workspace(scope="1")
    rec = Reconciler(ws, forward_falling=False)
    run(rec.add(chunk("1.0", [("e1", "Ava Stone", "cook", []), ("e2", "Ben Cole", "guest", []),
                              ("e3", "Cy Dale", "gardener", [])],
                      links=[{"kind": "space", "value": "Kitchen", "entity_ids": ["e1", "e2"]},
                             {"kind": "space", "value": "Garden", "entity_ids": ["e2", "e3"]}])))
    ava, ben, cy = (ws.find(n).id for n in ("Ava Stone", "Ben Cole", "Cy Dale"))
    assert ws.current(ava, "space") == "Kitchen"
    assert ws.current(cy, "space") == "Garden" and ws.current(ben, "space") == "Garden"
    assert [s.value for s in ws.stamps(ben, "space")] == ["Kitchen", "Garden"]
    assert ws.entities[ava].space != ws.entities[ben].space
    # the same when Ava and Ben already shared a node from an earlier chunk
    run(rec.add(chunk("1.1", [("e1", "Ava Stone", "cook", []), ("e2", "Ben Cole", "guest", [])],
                      links=[{"kind": "space", "value": "Hall", "entity_ids": ["e1", "e2"]}])))
    run(rec.add(chunk("1.2", [("e1", "Ava Stone", "cook", []), ("e2", "Ben Cole", "guest", []),
                              ("e3", "Cy Dale", "gardener", [])],
                      links=[{"kind": "space", "value": "Hall", "entity_ids": ["e1", "e2"]},
                             {"kind": "space", "value": "Shed", "entity_ids": ["e2", "e3"]}])))
    assert ws.current(ava, "space") == "Hall" and ws.current(ben, "space") == "Shed"
    assert ws.current(cy, "space") == "Shed"


def test_forward_falling_question_answered_by_later_chunk() -> None:
    def reply(kind: str, user: str) -> dict:
        assert kind == "GSW:open-questions"
        assert "Where did Ava meet Ben?" in user and "Who baked" not in user
        return {"answers": [{"id": "1", "answer": "Central Park", "entity_names": ["Central Park"]}]}

    llm = FakeLLM(reply)
    ws = Workspace(scope="1")
    rec = Reconciler(ws, llm=llm)
    met = {"phrase": "met Ben", "questions": [
        {"kind": "who", "question": "Who met Ben?", "answer_entity_ids": ["e1"]},
        {"kind": "where", "question": "Where did Ava meet Ben?"}]}
    baked = {"phrase": "baked bread", "questions": [
        {"kind": "who", "question": "Who baked bread?", "answer_entity_ids": ["e3"]},
        {"kind": "when", "question": "When was the bread baked?"}]}
    run(rec.add(chunk("1.0", [("e1", "Ava Stone", "guide", []), ("e3", "Cy Dale", "chef", [])],
                      verbs=[met, baked])))
    assert llm.calls == []  # nothing open from earlier chunks yet
    run(rec.add(chunk("1.1", [("e1", "Ava Stone", "guide", []), ("e2", "Central Park", "place", [])],
                      text="Ava Stone walked back into Central Park, where she had met Ben.")))
    assert llm.calls == ["GSW:open-questions"]
    q = next(q for v in ws.verbs.values() for q in v.questions if q.kind == "where")
    assert q.answer_text == "Central Park" and q.answered_in == "1.1" and q.asked_in == "1.0"
    assert q.answer_ids == [ws.find("Central Park").id]
    still_open = next(q for v in ws.verbs.values() for q in v.questions if q.kind == "when")
    assert still_open.is_open()
    assert any(e["event"] == "forward_falling_answered" for e in ws.events)
    assert "answered in 1.1" in render_entity(ws, ws.find("Ava Stone").id)


def test_embedding_candidates_verified_by_llm() -> None:
    llm = FakeLLM(lambda kind, user: {"same": "Ezra" in user.split("Second:")[1]})
    ws = Workspace(scope="1")
    rec = Reconciler(ws, resolution="embedding_llm", llm=llm, embedder=FakeEmbedder(), forward_falling=False,
                     er_threshold=0.5)
    run(rec.add(chunk("1.0", [("e1", "Ezra Edwards", "participant", [])])))
    run(rec.add(chunk("1.1", [("e1", "Mr Ezra Edwards", "winner", [])])))
    run(rec.add(chunk("1.2", [("e1", "Edwards Hall", "venue", [])])))
    assert ws.find("Ezra Edwards") is ws.find("Mr Ezra Edwards")
    assert ws.find("Edwards Hall") is not ws.find("Ezra Edwards")
    assert rec.stats["er_merged"] == 1 and "GSW:same-entity" in llm.calls


def test_failed_chunk_is_recorded_and_workspace_round_trips() -> None:
    ws = Workspace(scope="1")
    rec = Reconciler(ws, forward_falling=False)
    run(rec.add(chunk("1.0", [("e1", "Ava Stone", "guide", ["calm"])],
                      links=[{"kind": "time", "value": "May 2, 2025", "entity_ids": ["e1"]}])))
    bad = ChunkRecord(id="1.1", chapter="1", index=1, text="...", status="operator_failed", error="no JSON")
    run(rec.add(chunk_workspace(bad, None, None)))
    assert [c.status for c in ws.chunks] == ["ok", "operator_failed"]
    data = json.loads(json.dumps(ws.to_json()))
    back = Workspace.from_json(data)
    assert back.to_json() == ws.to_json()
    assert outputs_of(back.chunks[0])[0] is not None and outputs_of(back.chunks[1]) == (None, None)
    assert "operator_failed: no JSON" in render_text(back)
    dot = to_dot(back, back.find("Ava Stone").id)
    assert dot.startswith("digraph") and "May 2, 2025" in dot
    with pytest.raises(ValueError):
        Workspace.from_json({"format": "other"})
    # a resumed reconciler rebuilds its indexes from the loaded workspace
    rec2 = Reconciler(back, forward_falling=False)
    run(rec2.add(chunk("1.2", [("e1", "ava stone", "guide", [])])))
    assert len(back.entities) == 1


def _stream(rec: Reconciler, n: int) -> None:
    places = ["Park", "Museum", "Library", "Pier", "Hall"]
    for i in range(n):
        a, b = f"Person{i % 30} Smith", f"Person{(i + 1) % 30} Smith"
        ents = [("e1", a, "visitor", ["busy"]), ("e2", b, "friend", []), ("e3", f"Object{i} Thing", "item", []),
                ("e4", f"Guest{i} Jones", "guest", [])]
        verbs = [{"phrase": f"met guest {i}", "questions": [
            {"kind": "who", "question": "Who met?", "answer_entity_ids": ["e1", "e4"]},
            {"kind": "where", "question": "Where?"}]}]
        links = [{"kind": "space", "value": places[i % 5], "entity_ids": ["e1", "e2", "e3", "e4"]},
                 {"kind": "time", "value": f"Day {i // 3}", "entity_ids": ["e1", "e4"]}]
        asyncio.run(rec.add(chunk(f"{i // 10}.{i % 10}", ents, verbs, links)))


def _work(n: int) -> tuple[int, Reconciler]:
    """Python function calls made while reconciling n chunks: a measure of work that, unlike
    wall time, does not depend on what else the machine is doing."""
    rec = Reconciler(Workspace(scope="global"), llm=FakeLLM(), ff_max_questions=12, ff_window=8)
    calls = 0

    def profile(frame, event, arg):  # noqa: ANN001, ANN202 - sys.setprofile signature
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(profile)
    try:
        _stream(rec, n)
    finally:
        sys.setprofile(None)
    return calls, rec


def test_no_quadratic_blow_up() -> None:
    """4x the chunks with recurring entities (one ever-growing shared node): about 4x the work."""
    w_small, _ = _work(150)
    w_big, rec = _work(600)
    ws = rec.ws
    assert len(ws.entities) == 30 + 2 * 600
    assert len([n for n in ws.nodes.values() if n.kind == "space"]) == 1  # one ever-growing node
    assert rec.stats["ff_offered"] > 0
    assert w_big / w_small < 6, (w_small, w_big)  # quadratic would be about 16


def test_chunking_and_string_matching() -> None:
    text = "One. Two is here. Three! Four? Five.\n\nSix starts a paragraph. Seven."
    assert make_chunks(text, 3) == ["One. Two is here. Three!", "Four? Five. Six starts a paragraph.", "Seven."]
    assert make_chunks(text, 3, overlap=1)[:2] == ["One. Two is here. Three!", "Three! Four? Five."]
    # min_words: a group grows past 3 sentences until it holds the words (chat turns are short)
    assert make_chunks(text, 3, min_words=6) == ["One. Two is here. Three! Four?",
                                                 "Five. Six starts a paragraph. Seven."]
    assert make_chunks(text, 2, overlap=1, min_words=6)[0] == "One. Two is here. Three! Four?"
    assert make_chunks(text, 2, overlap=1, min_words=6)[1].startswith("Four? Five.")
    with pytest.raises(ValueError, match="chunk_min_words"):
        make_chunks(text, 3, min_words=0)
    m = NameMatcher()
    m.add(0, ["the Astronomy Night event"])
    m.add(1, ["Ezra Edwards", "Ezra"])
    m.add(2, ["March 23, 2025"])
    m.add(3, ["Night"])
    assert m.match("Astronomy Night") == {0}
    assert m.match("Ezra Edwards") == {1}
    assert m.match("march 23 2025") == {2}
    assert m.match("Mr. Ezra Edwards") == {1}  # a two-word name inside the question entity
    assert m.match("Carter Stewart") == set()


def test_operator_failure_is_recorded_not_fatal() -> None:
    class Flaky:
        async def complete(self, messages: list[dict[str, str]], max_tokens: int | None = None,
                       stop_repeats: str | None = None) -> ChatResult:
            if "[GSW:situate]" in messages[0]["content"]:
                return ChatResult("A short chapter.", 1, 1, False, "fake")
            return ChatResult(messages[-1]["content"].split("Passage:\n", 1)[1], 1, 1, False, "fake")

        async def complete_json(self, messages: list[dict[str, str]], model: Any, max_tokens: int | None = None,
                            stop_repeats: str | None = None):
            user = messages[-1]["content"]
            if "[GSW:operator]" in messages[0]["content"] and "Two" in user:
                raise JsonOutputError("no valid OperatorOutput JSON after 3 attempt(s)", ["{"])
            if "[GSW:operator]" in messages[0]["content"]:
                return model.model_validate({"entities": [{"id": "e1", "name": "Ava Stone"}]}), None
            return model.model_validate({"links": []}), None

        async def complete_format(self, messages: list[dict[str, str]], fmt: Any, max_tokens: int | None = None,
                                  stop_repeats: str | None = None):
            return await self.complete_json(messages, fmt.model, max_tokens, stop_repeats)

    stages = OperatorStages(Flaky(), StageSettings(chunk_sentences=1))
    out, coref = asyncio.run(stages.extract(Unit("7", "Ava Stone sang. Two birds flew. Ava Stone left.", 0)))
    assert coref == "ok"
    assert [r.status for r, _, _ in out] == ["ok", "operator_failed", "ok"]
    assert "no valid OperatorOutput" in (out[1][0].error or "") and out[1][1] is None
    ws = Workspace(scope="7")
    rec = Reconciler(ws, forward_falling=False)
    for r, op, st in out:
        asyncio.run(rec.add(chunk_workspace(r, op, st)))
    assert ws.find("Ava Stone").chunks == ["7.0", "7.2"] and ws.chunks[1].status == "operator_failed"


def test_a_later_entity_inherits_the_place_and_date_already_bound() -> None:
    """The paper's motivating case (its introduction): the hall and the date are given while only
    the narrator is there; the presenter appears two chunks later, seen with the narrator and no
    place or date named. Under the default `space_time_join: inherit` he takes both (his facts say
    they were shared); under `since` he gets neither. Entities with a value of their own, or a
    group naming a new value, inherit nothing."""
    def build(join: str) -> tuple[Workspace, Reconciler]:
        ws = Workspace(scope="1")
        rec = Reconciler(ws, forward_falling=False, space_time_join=join)
        run(rec.add(chunk("1.0", [("e1", "Ida Wren", "visitor", [])],
                          links=[{"kind": "space", "value": "Harbour Hall", "entity_ids": ["e1"]}])))
        run(rec.add(chunk("1.1", [("e1", "Ida Wren", "visitor", [])],
                          links=[{"kind": "time", "value": "3 March 2031", "entity_ids": ["e1"]}])))
        run(rec.add(chunk("1.2", [("e1", "Ida Wren", "listener", []), ("e2", "Olek Brandt", "presenter", []),
                                  ("e3", "Cy Dunn", "porter", [])],
                          links=[{"kind": "space", "value": None, "entity_ids": ["e1", "e2"]},
                                 {"kind": "time", "value": None, "entity_ids": ["e1", "e2"]},
                                 {"kind": "space", "value": "Quay Gate", "entity_ids": ["e3"]}])))
        return ws, rec

    ws, rec = build("inherit")
    olek = ws.find("Olek Brandt").id
    assert (ws.current(olek, "space"), ws.current(olek, "time")) == ("Harbour Hall", "3 March 2031")
    assert entity_facts(ws, olek) == ["[1.0] place: Harbour Hall (shared with linked entities)",
                                      "[1.1] time: 3 March 2031 (shared with linked entities)",
                                      "[1.2] role: presenter"]
    assert rec.stats["inherited"] == 2 and ws.current(ws.find("Cy Dunn").id, "space") == "Quay Gate"
    # Cy, who has a place of his own, joins Ida's node with a new value: only the new value is his
    run(rec.add(chunk("1.3", [("e1", "Ida Wren", "listener", []), ("e3", "Cy Dunn", "porter", [])],
                      links=[{"kind": "space", "value": "Lamp Room", "entity_ids": ["e1", "e3"]}])))
    cy = ws.find("Cy Dunn").id
    assert [s.value for s in ws.stamps(cy, "space")] == ["Quay Gate", "Lamp Room"]
    ws, rec = build("since")
    olek = ws.find("Olek Brandt").id
    assert (ws.current(olek, "space"), ws.current(olek, "time")) == (None, None)
    assert "inherited" not in rec.stats  # the ablation's workspace holds what it held before


def test_entities_of_a_merged_node_without_values_inherit_its_place() -> None:
    """The presenter first appears with his audience (a null link of their own), then is seen
    with the narrator: the merge gives both the narrator's hall; a merged node with a value of
    its own keeps its entities' values."""
    ws = Workspace(scope="1")
    rec = Reconciler(ws, forward_falling=False)
    run(rec.add(chunk("1.0", [("e1", "Ida Wren", "visitor", [])],
                      links=[{"kind": "space", "value": "Harbour Hall", "entity_ids": ["e1"]}])))
    run(rec.add(chunk("1.1", [("e1", "Olek Brandt", "presenter", []), ("e2", "audience", "listeners", [])],
                      links=[{"kind": "space", "value": None, "entity_ids": ["e1", "e2"]}])))
    run(rec.add(chunk("1.2", [("e1", "Ida Wren", "listener", []), ("e2", "Olek Brandt", "presenter", [])],
                      links=[{"kind": "space", "value": None, "entity_ids": ["e1", "e2"]}])))
    assert {ws.current(ws.find(n).id, "space") for n in ("Olek Brandt", "audience")} == {"Harbour Hall"}
