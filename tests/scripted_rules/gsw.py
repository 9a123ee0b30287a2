"""Scripted replies for GSW's prompt kinds: plausible, valid JSON derived from the prompt text
(Operator and space-time replies in the wire format the prompt's worked example uses).

Entities are capitalised multi-word names and dates found in the passage; a place is a name
after "at"/"in"; open "when"/"where" questions are answered by a later passage that has a date
or a place. Deterministic, so cached replays and call counts are stable.
"""

from __future__ import annotations

import json
import re
from typing import Any

_DATE = (r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December)"
         r" \d{1,2}, \d{4}\b")
_NAME = r"\b[A-Z][a-z]+(?:\s+(?:of\s+)?[A-Z][a-z]+)+\b"
_PLACE = r"\b(?:[Aa]t|[Ii]n|[Tt]o)\s+(?:the\s+)?(" + _NAME + r")"
_SKIP = {"The", "As", "At", "In", "He", "She", "They", "It", "When", "Chapter"}


def _section(text: str, head: str, stop: str | None = None) -> str:
    part = text.split(head, 1)[1] if head in text else text
    return part.split(stop, 1)[0] if stop and stop in part else part


def _names(text: str) -> list[str]:
    out = []
    for m in re.finditer(_NAME, text):
        words = m.group(0).split()
        while words and words[0] in _SKIP:
            words = words[1:]
        if len(words) >= 2:
            out.append(" ".join(words))
    return list(dict.fromkeys(out))


def _things(text: str) -> list[str]:
    return list(dict.fromkeys(_names(text) + re.findall(_DATE, text)))


def _wire(messages: list[dict[str, str]], data: dict[str, Any], kind: str) -> str:
    """The reply as JSON, or in methods/gsw/wire.py's lines when the example reply is not JSON."""
    example = next((m["content"] for m in messages if m["role"] == "assistant"), "{")
    if example.lstrip().startswith("{"):
        return json.dumps(data)
    from memeval.methods.gsw import wire
    from memeval.methods.gsw.schemas import OperatorOutput, SpaceTimeOutput

    if kind == "operator":
        return wire.encode_operator(OperatorOutput.model_validate(data))
    return wire.encode_spacetime(SpaceTimeOutput.model_validate(data))


def _user(messages: list[dict[str, str]]) -> str:
    """The real input: the last user message (a worked example's exchange may come first)."""
    return [m["content"] for m in messages if m["role"] == "user"][-1]


def coref(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    return _section(_user(messages), "Passage:\n")


def situate(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    names = _names(_section(_user(messages), "Excerpt:\n"))
    return f"This excerpt follows {names[0]}." if names else "This excerpt continues the chapter."


def operator(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    passage = _section(_user(messages), "Passage:\n")
    things = _things(passage)[:12]
    ids = {t: f"e{i + 1}" for i, t in enumerate(things)}
    places = set(re.findall(_PLACE, passage))
    entities = [{"id": ids[t], "name": t, "roles": [{"role": "date" if re.fullmatch(_DATE, t) else
                                                     "place" if t in places else "participant",
                                                     "states": ["present"]}]} for t in things]
    verbs = []
    for sent in re.split(r"(?<=[.!?])\s+", passage):
        people = [t for t in _things(sent) if t in ids and t not in places and not re.fullmatch(_DATE, t)]
        if not people:
            continue
        after = sent.split(people[0], 1)[1].split()
        phrase = " ".join(after[:3]).strip(".,;") or "appears"
        where = [ids[p] for p in re.findall(_PLACE, sent) if p in ids]
        when = [ids[d] for d in re.findall(_DATE, sent) if d in ids]
        verbs.append({"phrase": phrase, "questions": [
            {"kind": "who", "question": f"Who {phrase}?", "answer_entity_ids": [ids[people[0]]], "answer_text": ""},
            {"kind": "where", "question": f"Where did {people[0]} {phrase}?", "answer_entity_ids": where[:1],
             "answer_text": ""},
            {"kind": "when", "question": f"When did {people[0]} {phrase}?", "answer_entity_ids": when[:1],
             "answer_text": ""}]})
    people = [t for t in things if t not in places and not re.fullmatch(_DATE, t)]
    forward = [{"question": f"Where will {people[0]} go next?", "entity_ids": [ids[people[0]]]}] if people else []
    return _wire(messages, {"entities": entities, "verb_phrases": verbs[:6], "forward_questions": forward},
                 "operator")


def spacetime(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    user = _user(messages)
    passage = _section(user, "Passage:\n", "\n\nEntities:\n")
    ents = re.findall(r"(?m)^(e\d+): (.+)$", _section(user, "\n\nEntities:\n"))
    ids = [i for i, _ in ents]
    links = []
    places = re.findall(_PLACE, passage)
    if places and ids:
        links.append({"kind": "space", "value": places[0], "entity_ids": ids})
    elif len(ids) >= 2:  # together, no place named: a null-valued link
        links.append({"kind": "space", "value": None, "entity_ids": ids})
    dates = re.findall(_DATE, passage)
    if dates and ids:
        links.append({"kind": "time", "value": dates[0], "entity_ids": ids})
    return _wire(messages, {"links": links}, "spacetime")


def forward(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    user = _user(messages)
    passage = _section(user, "New passage:\n", "\n\nWhat the workspace holds:\n")
    known = _section(user, "What the workspace holds:\n", "\n\nOpen questions:\n")
    dates, places = re.findall(_DATE, passage), re.findall(_PLACE, passage)
    answers = []
    for num, q in re.findall(r"(?m)^(\d+)\. \[action: [^\]]*\] (.+)$", _section(user, "Open questions:\n")):
        # the passage first; else what the workspace holds about an entity the question names
        held = {label: m.group(1) for line in known.splitlines() if (name := line[2:].split(":", 1)[0]) and name in q
                for label in ("place", "time") if (m := re.search(label + r" now: ([^;]+)", line))}
        value = (dates[0] if dates else held.get("time", "")) if q.startswith("When") else \
            (places[0] if places else held.get("place", "")) if q.startswith("Where") else ""
        answers.append({"id": num, "answer": value, "entity_names": [value] if value else []})
    return json.dumps({"answers": answers})


def same_entity(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    user = _user(messages)
    a, _, b = user.partition("\n\nSecond:\n")
    ta = {w.lower() for w in re.findall(r"[A-Za-z]+", a.split(":")[1] if ":" in a else a)[:3]}
    tb = {w.lower() for w in re.findall(r"[A-Za-z]+", b)[:3]}
    return json.dumps({"same": bool(ta & tb)})


def summary(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    user = _user(messages)
    name = re.search(r"(?m)^Entity: (.+)$", user)
    facts = [re.sub(r"^\[[^\]]*\]\s*", "", f) for f in re.findall(r"(?m)^- (.+)$", user)]
    return f"{name.group(1) if name else 'This entity'}: " + "; ".join(facts[:8]) + "."


def ner(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    question = _section(_user(messages), "Question: ")
    return json.dumps({"entities": _things(question)[:8]})


RULES = [
    (r"\[GSW:coref\]", coref),
    (r"\[GSW:situate\]", situate),
    (r"\[GSW:operator\]", operator),
    (r"\[GSW:spacetime\]", spacetime),
    (r"\[GSW:open-questions\]", forward),
    (r"\[GSW:same-entity\]", same_entity),
    (r"\[GSW:entity-summary\]", summary),
    (r"\[GSW:question-entities\]", ner),
]
