"""Scripted replies for SEEM's prompt kinds: valid JSON derived from the prompt text.

Frames: one event per sentence or turn that names someone (two-word names, or the speaker of a
'Name: text' turn), with its date and place; the summary names the people, then quotes the first
sentence (so it never copies the passage's opening). A frame retry turn is answered from the
passage of the first turn. Facts: first name -- 'with' --> other names of a sentence. Judge:
strong when two frames share a date and a participant, moderate when they share two
participants, else weak; the version-3 fields say the same slot by slot (same_time "no" when
both frames have dates and share none). Merge: the union of both frames' events. Deterministic.
"""

from __future__ import annotations

import json
import re
from typing import Any

_DATE = (r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December)"
         r" \d{1,2}, \d{4}\b")
_NAME = r"\b[A-Z][a-z]+ [A-Z][a-z]+\b"
_SPEAKER = r"^([A-Z][A-Za-z]+): "
_PLACE = r"\b(?:at|in) (?:the )?([A-Z][a-z]+(?: [A-Z][a-z]+)*)"
_SKIP = {"The", "At", "In", "On", "He", "She", "They", "It", "When", "Chapter", "Passage", "Hey", "Hi", "Hello",
         "Thanks", "Thank", "Wow", "Yes", "Yeah", "Oh", "Great", "Sure", "Bye", "Good", "Congrats"}


def _user(messages: list[dict[str, str]]) -> str:
    """The last user turn: the passage to extract (earlier turns are the prompt's worked example)."""
    return [m["content"] for m in messages if m["role"] == "user"][-1]


def _passage(messages: list[dict[str, str]]) -> tuple[str, str]:
    user = [m["content"] for m in messages if m["role"] == "user" and "Passage:\n" in m["content"]][-1]
    date = user.split("\n", 1)[0].removeprefix("Passage date: ")
    return date, user.split("Passage:\n", 1)[1] if "Passage:\n" in user else user


def _names(text: str) -> list[str]:
    out = [m for m in re.findall(_NAME, text) if m.split()[0] not in _SKIP]
    out += re.findall(_SPEAKER, text, re.M)
    return list(dict.fromkeys(out))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def frame(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    date, text = _passage(messages)
    events = []
    for sent in _sentences(text):
        people = _names(sent)
        if not people:
            continue
        dates = re.findall(_DATE, sent)
        places = [p for p in re.findall(_PLACE, sent) if p not in people]
        after = sent.split(people[0], 1)[-1].lstrip(": ").split()
        events.append({"participants": people[:4], "action": " ".join(after[:8]).strip(".,"),
                       "time": dates[0] if dates else "", "time_raw": dates[0] if dates else "",
                       "location": places[0] if places else "", "reason": "", "method": ""})
    first = _sentences(text)[:1]
    people = ", ".join(_names(text)[:3]) or "Someone"
    return json.dumps({"summary": f"{people} in this passage: {first[0][:250]}" if first else "",
                       "events": events[:6]})


def facts(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    date, text = _passage(messages)
    out = []
    for sent in _sentences(text):
        people = _names(sent)
        if not people:
            continue
        dates = re.findall(_DATE, sent)
        places = [p for p in re.findall(_PLACE, sent) if p not in people]
        for other in people[1:3] + places[:1]:
            out.append({"subject": people[0], "predicate": "with" if other in people else "at",
                        "object": other, "time": dates[0] if dates else ""})
    return json.dumps({"facts": out[:12]})


def judge(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    user = _user(messages)
    a, _, b = user.partition("\n\nFrame B:\n")
    da, db = set(re.findall(_DATE, a)), set(re.findall(_DATE, b))
    na = {n for n in re.findall(_NAME, a) if n.split()[0] not in _SKIP}
    nb = {n for n in re.findall(_NAME, b) if n.split()[0] not in _SKIP}
    shared = na & nb
    level = "strong" if da & db and shared else "moderate" if len(shared) >= 2 else "weak"
    same_time = "yes" if da & db else "no" if da and db else "unclear"
    same_people = "yes" if shared else "no" if na and nb else "unclear"
    return json.dumps({"same_participants": same_people, "same_time": same_time, "same_place": "unclear",
                       "same_event": "yes" if level != "weak" else "no", "level": level,
                       "reason": f"shared dates {sorted(da & db)}, names {sorted(shared)}"})


def merge(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    user = _user(messages)
    a, _, b = user.partition("\n\nFrame B:\n")
    fa, fb = json.loads(a.removeprefix("Frame A:\n")), json.loads(b)
    events = fa["events"] + [e for e in fb["events"] if e not in fa["events"]]
    return json.dumps({"summary": f"{fa['summary']} {fb['summary']}"[:390], "events": events[:6]})


RULES = [
    (r"\[SEEM:frame\]", frame),
    (r"\[SEEM:facts\]", facts),
    (r"\[SEEM:fuse-judge\]", judge),
    (r"\[SEEM:fuse-merge\]", merge),
]
