"""Every prompt GSW sends, written for this framework. Each system message opens with a
`[GSW:<kind>]` tag so logs, caches and the scripted test server can tell the kinds apart.

Changing any text here changes the cache keys of that call kind: bump PROMPT_VERSION so that
index folders built with older prompts are not reused. The Operator and space-time prompts come
in two wire formats (`method.wire`): `json` (the replies of gsw-prompts-3) and `compact`, the
line layout of wire.py, whose prompts are the JSON ones with the format's sentences replaced
(`_for_lines`) and whose version is wire.WIRE_VERSION as well.
"""

from __future__ import annotations

import json

from .schemas import OperatorOutput, SpaceTimeOutput
from .wire import encode_operator, encode_spacetime

PROMPT_VERSION = "gsw-prompts-3"
WIRES = ("compact", "json")  # the Operator and space-time reply formats (method.wire)

Messages = list[dict[str, str]]

# The worked example the Operator, space-time and question-entity prompts show. It is invented
# for this framework (a test checks that no benchmark book contains its values) and it is sent as
# its own user/assistant turn pair before the real passage, not inside the instructions: small
# local models copied example values written into the instructions into nearly every reply
# (gsw-prompts-2 with Qwen2.5-Coder-0.5B: 14 of 15 Operator replies). guard.py drops a reply's
# role, state, action or place/time that repeats one of the example's values while the passage
# does not contain it.
EXAMPLE_PASSAGE = (
    "On the morning of June 2, 2029, Tobin Marwen rowed the mail boat from Skellwick Pier to the "
    "island of Orran. There he handed a sealed parcel to the lighthouse keeper, Agathe Quennel, who "
    "signed for it in her logbook. The weather turned before noon, so Tobin Marwen waited out the "
    "storm in the keeper's cottage.")
EXAMPLE_OPERATOR_REPLY: dict = {
    "entities": [
        {"id": "e1", "name": "Tobin Marwen", "roles": [
            {"role": "mail boat rower", "states": ["waiting out the storm"]}]},
        {"id": "e2", "name": "Agathe Quennel", "roles": [
            {"role": "lighthouse keeper"},
            {"role": "recipient of the parcel", "states": ["signed for the parcel"]}]},
        {"id": "e3", "name": "Skellwick Pier", "roles": [{"role": "starting point of the crossing"}]},
        {"id": "e4", "name": "island of Orran", "roles": [{"role": "destination of the crossing"}]},
        {"id": "e5", "name": "June 2, 2029", "roles": [{"role": "date of the crossing"}]},
        {"id": "e6", "name": "sealed parcel", "roles": [{"role": "delivered mail"}]},
        {"id": "e7", "name": "keeper's cottage", "roles": [{"role": "shelter from the storm"}]}],
    "verb_phrases": [
        {"phrase": "rowed the mail boat", "questions": [
            {"kind": "who", "question": "Who rowed the mail boat?", "answer_entity_ids": ["e1"]},
            {"kind": "where", "question": "Where did the crossing end?", "answer_entity_ids": ["e4"]},
            {"kind": "when", "question": "When did the crossing take place?", "answer_entity_ids": ["e5"]}]},
        {"phrase": "handed over the sealed parcel", "questions": [
            {"kind": "whom", "question": "To whom was the parcel handed?", "answer_entity_ids": ["e2"]},
            {"kind": "why", "question": "Why was the parcel handed over?"}]},
        {"phrase": "waited out the storm", "questions": [
            {"kind": "where", "question": "Where did Tobin Marwen wait?", "answer_entity_ids": ["e7"]},
            {"kind": "why", "question": "Why did Tobin Marwen wait?",
             "answer_text": "the weather turned before noon"}]}],
    "forward_questions": [
        {"question": "When will Tobin Marwen row back to Skellwick Pier?", "entity_ids": ["e1", "e3"]}]}
EXAMPLE_SPACETIME_REPLY: dict = {"links": [
    {"kind": "space", "value": "island of Orran", "entity_ids": ["e1", "e2", "e6", "e7"]},
    {"kind": "time", "value": "June 2, 2029", "entity_ids": ["e1", "e2", "e6"]}]}
EXAMPLE_NER = ("Where did Tobin Marwen deliver the sealed parcel on June 2, 2029?",
               {"entities": ["Tobin Marwen", "sealed parcel", "June 2, 2029"]})

EXAMPLE_ROLES = tuple(r["role"] for e in EXAMPLE_OPERATOR_REPLY["entities"] for r in e["roles"])
EXAMPLE_STATES = tuple(s for e in EXAMPLE_OPERATOR_REPLY["entities"] for r in e["roles"] for s in r.get("states", []))
EXAMPLE_ACTIONS = tuple(v["phrase"] for v in EXAMPLE_OPERATOR_REPLY["verb_phrases"])
EXAMPLE_PLACES = ("Skellwick Pier", "island of Orran", "keeper's cottage")
EXAMPLE_TIMES = ("June 2, 2029",)
EXAMPLE_QUESTIONS = tuple(q["question"] for q in EXAMPLE_OPERATOR_REPLY["forward_questions"])
EXAMPLE_NAMES = ("Tobin Marwen", "Agathe Quennel")


COREF = """[GSW:coref] You prepare story text for information extraction.
Rewrite the passage so that each pronoun or vague mention of a person, group, place, date or
thing (he, she, they, him, their, it, there, the woman, the venue, that day) is replaced by the
full name it stands for, whenever the passage makes clear who or what that is. When the
referent is never named (for example an unnamed narrator), leave the pronoun as it is.
Keep every other word, the order of sentences and the paragraph breaks. Do not shorten,
summarise, explain or add anything. Reply with the rewritten passage and nothing else."""

SITUATE = """[GSW:situate] You help an extraction system read one excerpt of a longer chapter.
In one or two sentences, place the excerpt within its chapter: who is present, where and when
it happens, and what has just happened before it, using only what the chapter says.
Reply with those sentences only."""

OPERATOR = """[GSW:operator] You read one short passage of a story and write down its semantic map
as JSON: who and what takes part, in which roles and states, which actions connect them, and
which questions the passage leaves open. A few sentences of background may come first: use them
to understand the passage (who "the pilot" is, where the scene is), but describe the passage.

1. Entities. Every participant the passage names: people, groups, organisations, places, dates
   and times, objects, events and activities. Give each an id (e1, e2, ...) and its name as the
   passage writes it, in its fullest form. A name is a noun phrase, never a whole sentence.
2. Roles and states. For each entity, the roles it plays in this passage as short noun phrases
   and, for each role, the states it is in while playing it.
3. Actions. Every action or event as a short verb phrase. Include implicit actions: what the
   passage implies happened without a verb for it (someone who comes back with a medal has taken
   part and won; a guest with a ticket has bought or received it).
4. Questions about each action. Go through the checklist who, whom (to or for whom), what,
   where, when, why and how; ask the ones that matter for this action and answer each from the
   passage: answer_entity_ids holds the ids of the entities that answer it, answer_text a short
   answer when no entity fits. When the passage does not answer a question, leave both empty
   (do not write "unknown" or "none"): it stays open, and later passages may answer it.
5. What may come next. Up to three questions about outcomes the passage sets up but does not
   settle, each with the ids of the entities it concerns.

Every name, role, state, action and answer must come from the passage you are given. The first
exchange below is a worked example about a different story: it shows the form of a reply, never
its content. Reply with one JSON object of the same shape; kind is one of who, whom, what,
where, when, how, why. Leave out a field that would be empty. Keep lists short; do not repeat items."""

SPACETIME = """[GSW:spacetime] You tie the participants of a story passage to places and times.
You get the passage and its entities (id: name). Group together the entities that the
passage puts at the same place, and those it puts at the same time. An entity belongs to a
group when the passage places it there, directly or through an event it takes part in. Give
each group's place or time as the passage words it. When the passage shows entities together
but names no place (or no time) for them, still group them, with value null: a place or time
named later reaches them. The first exchange below is a worked example about a different
story; take every value from the passage you are given. Reply with one JSON object of the same
shape, {"links": [...]}; reply {"links": []} when the passage puts no entities together and
gives no place and no time."""

FORWARD = """[GSW:open-questions] Earlier passages of a story left some questions unanswered:
questions about actions, and questions about what would happen next. You get a new passage and
what the story's workspace already holds about the entities involved (their roles, places and
times so far). Answer each question that the new passage, alone or together with those facts,
settles; answer briefly, with the names used (entity_names lists the people, places, dates or
things in the answer). For a question they do not settle, give an empty answer; never guess.
Reply with one JSON object: {"answers": [{"id": "1", "answer": "...", "entity_names": ["..."]}]}"""

SAME_ENTITY = """[GSW:same-entity] Two descriptions come from the same story. Decide whether they
refer to the same real-world entity (the same person, place, date, object or event).
Reply with one JSON object: {"same": true} or {"same": false}."""



def _for_lines(text: str, swaps: tuple[tuple[str, str], ...]) -> str:
    """A JSON prompt rewritten for the line layout: each format sentence swapped (each must be
    there, so an edit of the JSON prompt cannot leave the compact one describing JSON)."""
    for old, new in swaps:
        if text.count(old) != 1:
            raise AssertionError(f"the JSON prompt no longer has {old[:50]!r}: update prompts._for_lines")
        text = text.replace(old, new)
    return text


OPERATOR_LINES = _for_lines(OPERATOR, (
    ("semantic map\nas JSON: who", "semantic map\nas lines: who"),
    ("passage: answer_entity_ids holds the ids of the entities that answer it, answer_text a short\n"
     "   answer when no entity fits. When the passage does not answer a question, leave both empty\n",
     "passage: after \" = \", the ids of the entities that answer it, or a few words when no\n"
     "   entity fits. When the passage does not answer a question, write no \" = \" and no answer\n"),
    ("Reply with one JSON object of the same shape; kind is one of who, whom, what,\n"
     "where, when, how, why. Leave out a field that would be empty. Keep lists short; do not repeat items.",
     "Reply in the same line format, one item a line:\n"
     "e<N> NAME                 an entity; the lines under it are indented by one space:\n"
     " r ROLE                   a role of that entity\n"
     " s STATE                  a state of the role above\n"
     "v ACTION                  an action; under it, indented:\n"
     " KIND QUESTION = ANSWER   a question about that action (KIND: who, whom, what, where, when,\n"
     "                          how or why; ANSWER: entity ids such as e1 e4, or a few words)\n"
     "f QUESTION = IDS          a question about what may come next, with its entities' ids\n"
     "Entities first, then actions, then what may come next. Keep lists short; do not repeat items.")))

SPACETIME_LINES = _for_lines(SPACETIME, (
    ("still group them, with value null: a place", "still group them, with no value: a place"),
    ("Reply with one JSON object of the same\n"
     "shape, {\"links\": [...]}; reply {\"links\": []} when the passage puts no entities together and\n"
     "gives no place and no time.",
     "Reply in the same line format, one group a line:\n"
     "space PLACE = IDS (entities at one place), time TIME = IDS (entities at one time), and\n"
     "space = IDS when no place is named (time = IDS when no time is); reply none when the passage\n"
     "puts no entities together and gives no place and no time.")))

SUMMARY = """[GSW:entity-summary] Write a short factual account of what one chapter of a story
says about one entity, from structured facts listed in story order: the entity's roles and
states, the actions it takes part in, and where and when it is. Name every place and date the
facts give and the role the entity had there. Add nothing the facts do not state. Plain prose,
at most five sentences."""

# Version 2 (summary_version: 2): no sentence limit. The paper bounds a summary only by its 500
# generation tokens (its Table 6 contexts of up to 17 summaries run 1.5k-6.5k tokens); version 1
# asked for at most five sentences and dropped most of an entity's places and dates.
SUMMARY_V2 = """[GSW:entity-summary] Write a factual account of what one chapter of a story says
about one entity, from structured facts listed in story order: the entity's roles and states,
the actions it takes part in, and where and when it is. Cover every fact, in story order: each
place and date the facts give, with the role the entity had and what it did there. The
chapter heading may carry the date of the chapter or conversation: a fact marked with a
relative time (yesterday, last week) happened relative to that date, so say both. Add nothing the
facts do not state. Plain prose; as long as the facts need and no longer."""

NER = """[GSW:question-entities] List the named things a question is about: people, places,
dates, named events or activities, organisations and objects. Copy each as the question
writes it; never list a generic word such as "date", "location" or "event" on its own. The
first exchange below is a worked example. Reply with one JSON object: {"entities": ["..."]}."""


def _with_example(system: str, example_user: str, example_reply: dict | str, user: str) -> Messages:
    """System, then the worked example as its own exchange (a reply dict as JSON, a str as it
    is), then the real input last: the shared prefix is byte-identical across calls of one kind,
    so the server reuses its KV cache."""
    reply = example_reply if isinstance(example_reply, str) else json.dumps(example_reply, ensure_ascii=False)
    return [{"role": "system", "content": system},
            {"role": "user", "content": example_user},
            {"role": "assistant", "content": reply},
            {"role": "user", "content": user}]


def _listing(entities: list[tuple[str, str]]) -> str:
    return "\n".join(f"{eid}: {name}" for eid, name in entities)


def coref_messages(text: str) -> Messages:
    return [{"role": "system", "content": COREF}, {"role": "user", "content": f"Passage:\n{text}"}]


def situate_messages(chapter: str, chunk: str) -> Messages:
    return [{"role": "system", "content": SITUATE},
            {"role": "user", "content": f"Chapter:\n{chapter}\n\nExcerpt:\n{chunk}"}]


def operator_messages(chunk: str, context: str = "", wire: str = "json") -> Messages:
    """The Operator's messages; `wire`: json (gsw-prompts-3) or compact (wire.py's lines)."""
    head = f"Background (where this passage sits): {context}\n\n" if context else ""
    system, reply = ((OPERATOR_LINES, encode_operator(OperatorOutput.model_validate(EXAMPLE_OPERATOR_REPLY)))
                     if _compact(wire) else (OPERATOR, EXAMPLE_OPERATOR_REPLY))
    return _with_example(system, f"Passage:\n{EXAMPLE_PASSAGE}", reply, f"{head}Passage:\n{chunk}")


def spacetime_messages(chunk: str, entities: list[tuple[str, str]], wire: str = "json") -> Messages:
    """The space-time messages; `wire` as for operator_messages."""
    ex_entities = [(e["id"], e["name"]) for e in EXAMPLE_OPERATOR_REPLY["entities"]]
    system, reply = ((SPACETIME_LINES, encode_spacetime(SpaceTimeOutput.model_validate(EXAMPLE_SPACETIME_REPLY)))
                     if _compact(wire) else (SPACETIME, EXAMPLE_SPACETIME_REPLY))
    return _with_example(system, f"Passage:\n{EXAMPLE_PASSAGE}\n\nEntities:\n{_listing(ex_entities)}",
                         reply, f"Passage:\n{chunk}\n\nEntities:\n{_listing(entities)}")


def _compact(wire: str) -> bool:
    if wire not in WIRES:
        raise ValueError(f"gsw wire must be one of {list(WIRES)}, not {wire!r}")
    return wire == "compact"


def forward_messages(chunk: str, questions: list[tuple[str, str, str]], known: list[str] | None = None) -> Messages:
    """questions: (number, action phrase, question text); known: workspace facts, one per line."""
    listing = "\n".join(f"{n}. [action: {phrase}] {q}" for n, phrase, q in questions)
    facts = "\n".join(f"- {k}" for k in known or []) or "- (nothing yet)"
    return [{"role": "system", "content": FORWARD},
            {"role": "user", "content": f"New passage:\n{chunk}\n\nWhat the workspace holds:\n{facts}"
                                        f"\n\nOpen questions:\n{listing}"}]


def same_entity_messages(a: str, b: str) -> Messages:
    return [{"role": "system", "content": SAME_ENTITY},
            {"role": "user", "content": f"First:\n{a}\n\nSecond:\n{b}"}]


def summary_messages(chapter_title: str, name: str, facts: list[str], version: int = 2) -> Messages:
    body = "\n".join(f"- {f}" for f in facts) or "- (no facts recorded)"
    return [{"role": "system", "content": SUMMARY if version == 1 else SUMMARY_V2},
            {"role": "user", "content": f"Chapter: {chapter_title}\nEntity: {name}\nFacts in story order:\n{body}"}]


def ner_messages(question: str) -> Messages:
    return _with_example(NER, f"Question: {EXAMPLE_NER[0]}", EXAMPLE_NER[1], f"Question: {question}")
