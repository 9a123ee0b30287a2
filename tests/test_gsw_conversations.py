"""GSW on conversations (issue 26): who says each line, and the session's date, reach the Operator.

Built from the v1 LoCoMo bundle's index (tests/fixtures/v1_bundles, conv-30 read by the 0.5B model): its
chunks cut turns apart, and its Operator gave Gina Jon's lost banking job (session 1) and Jon
Gina's clothing store (session 3), and made the speaker "Gina" a place and a time.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conftest import v1_bundle  # noqa: E402

from memeval.datasets.types import Unit  # noqa: E402
from memeval.methods.gsw.frame import (  # noqa: E402
    conversation_chunks,
    mark_pronouns,
    parse_turns,
    speaker_lines,
    unmark,
)
from memeval.methods.gsw.kinds import check_kinds  # noqa: E402
from memeval.methods.gsw.operator import OperatorStages, StageSettings, make_chunks, split_sentences  # noqa: E402
from memeval.methods.gsw.schemas import OperatorOutput, SpaceTimeOutput  # noqa: E402
from memeval.model_access.chat import ChatResult  # noqa: E402

INDEX = v1_bundle("locomo-local") / "indexes" / "gsw-194f604fce" / "conv-30" / "chapters"
DATE = "4:04 pm on 20 January, 2023"  # session 1's date in the data (the unit's timestamp)


def _stored(session: str) -> dict[str, Any]:
    return json.loads((INDEX / f"{session}.json").read_text(encoding="utf-8"))


def _session_text(session: str) -> str:
    """The session as the loader writes it ('Name: text' turns, blank lines between), rebuilt
    from the stored chunks, which joined its sentences with spaces."""
    joined = " ".join(c["text"] for c in _stored(session)["chunks"])
    return "\n\n".join(re.split(r"(?<=[.!?\]]) (?=(?:Gina|Jon): )", joined))


def test_sentence_chunks_cut_turns_apart_and_turn_chunks_keep_every_speaker() -> None:
    text = _session_text("1")
    old = make_chunks(text, 3, min_words=50)  # the bundle's settings (chunk_min_words=50)
    assert old == [c["text"] for c in _stored("1")["chunks"]]  # the rebuilt text is the one indexed
    assert old[1].startswith("Unfortunately, I also lost my job at Door Dash")  # whose job? the chunk does not say
    turns = parse_turns(text)
    assert turns is not None and {t.speaker for t in turns} == {"Gina", "Jon"}
    new = conversation_chunks(turns, split_sentences, 3, min_words=50)
    lines = [line for c in new for line in c.splitlines()]
    assert all(line.split(": ", 1)[0] in {"Gina", "Jon"} for line in lines)  # a long turn is 2+ lines
    said = [w for line in lines for w in unmark(line.split(": ", 1)[1]).split()]
    assert said == [w for t in turns for w in t.text.split()]  # every word of every turn, in order
    door = next(line for line in lines if "Door Dash" in line)
    assert door.startswith("Gina: ") and "lost my [Gina] job at Door Dash" in door
    bank = next(line for line in lines if "banker" in line)
    assert bank.startswith("Jon: ") and "Lost my [Jon] job as a banker" in bank
    assert "Sorry about your [Jon] job Jon" in "\n".join(lines)  # Gina speaks to Jon
    assert all(len(" ".join(c.split()).split()) >= 50 for c in new[:-1])


def _framed_chunk(session: str, needle: str) -> str:
    turns = parse_turns(_session_text(session))
    assert turns is not None
    return next(c for c in conversation_chunks(turns, split_sentences, 3, min_words=50) if needle in c)


def test_first_person_lines_given_to_the_other_speaker_move_back() -> None:
    """The stored replies, checked against who said each line: Jon's banking job goes back to Jon,
    Gina's clothing store to Gina; the place and time "Gina" lose their value."""
    stored = _stored("1")["chunks"][0]
    op, st = OperatorOutput.model_validate(stored["operator"]), SpaceTimeOutput.model_validate(stored["space_time"])
    text = _framed_chunk("1", "banker")
    out, out_st, counts = check_kinds(op, st, text, set(), speaker_lines(text))
    states = {e.name: [s for r in e.roles for s in r.states] for e in out.entities}
    assert "lost my job as a banker yesterday" in states["Jon"]
    assert "lost my job as a banker yesterday" not in states["Gina"]
    assert counts["speaker_states_moved"] == 1
    assert out_st is not None and [(link.kind, link.value) for link in out_st.links] == [("space", None), ("time", None)]
    assert (counts["kind_places_dropped"], counts["kind_times_dropped"]) == (1, 1)

    stored = next(c for c in _stored("3")["chunks"] if "clothing store" in c["text"])
    op = OperatorOutput.model_validate(stored["operator"])
    text = _framed_chunk("3", "clothing store")
    out, _, counts = check_kinds(op, None, text, set(), speaker_lines(text))
    gina = next(e for e in out.entities if e.name == "Gina")  # not in the reply: added as the speaker
    assert [s for r in gina.roles for s in r.states] == ["now I can expand my clothing store and get closer to my customers"]
    assert not any("clothing" in s for e in out.entities if e.name == "Jon" for r in e.roles for s in r.states)


def test_a_copied_speaker_mark_naming_the_wrong_speaker_does_not_keep_the_line() -> None:
    """A real 0.5B reply to session 1's framed first chunk (a later conv-30 run, frame on): the
    Operator copied Gina's line with its mark rewritten, "lost my [Jon] job at Door Dash this
    month", and gave it to Jon. The line's words, not the copied mark, say who said it."""
    reply = {"entities": [{"id": "e1", "name": "Jon", "roles": [{"role": "banker", "states": [
        "lost her job", "lost my [Jon] job at Door Dash this month"]}]}]}
    text = _framed_chunk("1", "Door Dash")
    assert "lost my [Gina] job at Door Dash this month" in text
    out, _, counts = check_kinds(OperatorOutput.model_validate(reply), None, text, set(), speaker_lines(text))
    states = {e.name: [s for r in e.roles for s in r.states] for e in out.entities}
    assert states["Gina"] == ["lost my job at Door Dash this month"]
    assert states["Jon"] == ["lost her job"]
    assert counts["speaker_states_moved"] == 1 and counts["speaker_marks_removed"] == 1


def test_only_speaker_marks_are_stripped_from_states() -> None:
    lines = [("Ada", "I took a photo."), ("Ben", "Nice.")]
    op = OperatorOutput.model_validate({"entities": [{"id": "e1", "name": "Ada", "roles": [
        {"role": "photographer", "states": ["my [Ada] photo [shares a photo: a red boat]"]}]}]})
    out, _, counts = check_kinds(op, None, "Ada: I [Ada] took a photo.\nBen: Nice.", set(), lines)
    assert out.entities[0].roles[0].states == ["my photo [shares a photo: a red boat]"]
    assert counts == {"speaker_marks_removed": 1}


def test_a_state_both_speakers_could_have_said_stays() -> None:
    lines = [("Ada", "I love the sea."), ("Ben", "I love the sea too.")]
    op = OperatorOutput.model_validate({"entities": [{"id": "e1", "name": "Ada", "roles": [
        {"role": "swimmer", "states": ["I love the sea"]}]}]})
    out, _, counts = check_kinds(op, None, "Ada: I love the sea.\nBen: I love the sea too.", set(), lines)
    assert out.entities[0].roles[0].states == ["I love the sea"] and not counts


def test_pronoun_marks() -> None:
    assert mark_pronouns("I'm sure my plan suits you, i.e. me.", "Ada", "Ben") == \
        "I'm [Ada] sure my [Ada] plan suits you [Ben], i.e. me [Ada]."
    assert mark_pronouns("Did you see me?", "user", None) == "Did you see me [user]?"  # no single addressee
    assert parse_turns("A chapter.\n\nIt goes on: and on.") is None


class RecordingLLM:
    """Answers every GSW call kind; records each request's messages."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []

    def _kind(self, messages: list[dict[str, str]]) -> str:
        return messages[0]["content"].split("]")[0].lstrip("[")

    async def complete(self, messages: list[dict[str, str]], max_tokens: int | None = None, **_: Any) -> ChatResult:
        kind, user = self._kind(messages), messages[-1]["content"]
        self.requests.append((kind, user))
        text = user.split("Passage:\n", 1)[-1] if kind == "GSW:coref" else "They talk about work."
        return ChatResult(text=text, prompt_tokens=1, completion_tokens=1, cached=False, model="m")

    async def complete_json(self, messages: list[dict[str, str]], model: Any, max_tokens: int | None = None,
                            **_: Any) -> tuple[Any, None]:
        kind, user = self._kind(messages), messages[-1]["content"]
        self.requests.append((kind, user))
        if kind == "GSW:operator":
            return model.model_validate({"entities": [{"id": "e1", "name": "Ada"}]}), None
        return model.model_validate({"links": []}), None

    async def complete_format(self, messages: list[dict[str, str]], fmt: Any, max_tokens: int | None = None,
                              **_: Any) -> tuple[Any, None]:
        return await self.complete_json(messages, fmt.model, max_tokens)


def _extract(settings: StageSettings, unit: Unit) -> tuple[list[Any], RecordingLLM]:
    llm = RecordingLLM()
    out, _ = asyncio.run(OperatorStages(llm, settings).extract(unit))
    return out, llm


def test_the_session_date_reaches_chunks_situating_and_space_time() -> None:
    unit = Unit(id="1", text="Ada: I sold my boat yesterday.\n\nBen: Sorry to hear it. Was it old?\n\n"
                             "Ada: Very old. I will buy a van.", position=0, timestamp=DATE)
    out, llm = _extract(StageSettings(), unit)
    assert [r.text for r, _, _ in out] == [
        f"Date: {DATE}\nAda: I [Ada] sold my [Ada] boat yesterday.\nBen: Sorry to hear it. Was it old?",
        f"Date: {DATE}\nAda: Very old. I [Ada] will buy a van."]
    for kind in ("GSW:situate", "GSW:operator", "GSW:spacetime"):
        sent = [user for k, user in llm.requests if k == kind]
        assert sent and all(DATE in user for user in sent), kind
    old, llm = _extract(StageSettings(speaker_frame=False, unit_dates=False), unit)  # the runs before issue 26
    assert [r.text for r, _, _ in old] == ["Ada: I sold my boat yesterday. Ben: Sorry to hear it. Was it old?",
                                           "Ada: Very old. I will buy a van."]
    assert not any(DATE in user for _, user in llm.requests)


def test_a_coreference_rewrite_that_loses_turns_is_not_chunked() -> None:
    """Sessions 1 and 2 of the v1 index: the 0.5B rewrite dropped the last two turns. The
    frame chunks the original turns then (status fallback_turns), so no line is lost."""
    unit = Unit(id="1", text="Ada: One.\n\nBen: Two.\n\nAda: Three.", position=0)
    stages = OperatorStages(RecordingLLM(), StageSettings())
    chunks, _, status = stages.chunk_texts(unit, "Ada: One.\n\nBen: Two.", "ok")
    assert status == "fallback_turns" and "Ada: Three." in "\n".join(chunks)
    chunks, _, status = stages.chunk_texts(unit, "Ada: One.\n\nBen: Two, says Ben.\n\nAda: Three.", "ok")
    assert status == "ok" and "Ben: Two, says Ben." in chunks[0]
