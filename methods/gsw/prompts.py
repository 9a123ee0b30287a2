"""Every prompt GSW sends, written for this framework. Each system message opens with a
`[GSW:<kind>]` tag so logs, caches and the scripted test server can tell the kinds apart.

Changing any text here changes the cache keys of that call kind: bump PROMPT_VERSION so that
index folders built with older prompts are not reused.
"""

from __future__ import annotations

PROMPT_VERSION = "gsw-prompts-2"

Messages = list[dict[str, str]]

# The example values the Operator and space-time prompts show, invented for this framework (a
# test checks that no benchmark book contains them). guard.py drops a reply's role, state, action
# or place/time that repeats one of them while the passage does not contain it.
EXAMPLE_ROLES = ("ferry pilot", "host of the picnic", "day of the regatta")
EXAMPLE_STATES = ("seasick", "sold out", "postponed")
EXAMPLE_ACTIONS = ("repaired the lighthouse lamp", "carried the crates ashore")
EXAMPLE_PLACES = ("Marrowgate Ferry Landing", "the harbour steps")
EXAMPLE_TIMES = ("April 4, 2031", "the next morning")
EXAMPLE_QUESTIONS = ("When will the regatta be rescheduled?",)


def _q(values: tuple[str, ...]) -> str:
    return ", ".join(f'"{v}"' for v in values)


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

OPERATOR = f"""[GSW:operator] You read one short passage of a story and write down its semantic map
as JSON: who and what takes part, in which roles and states, which actions connect them, and
which questions the passage leaves open. A few sentences of background may come first: use them
to understand the passage (who "the pilot" is, where the scene is), but describe the passage.

1. Entities. Every participant the passage names: people, groups, organisations, places, dates
   and times, objects, events and activities. Give each an id (e1, e2, ...) and its name as the
   passage writes it, in its fullest form. A name is a noun phrase, never a whole sentence.
2. Roles and states. For each entity, the roles it plays in this passage as short noun phrases
   (for example {_q(EXAMPLE_ROLES)}) and, for each role, the states it is in while playing it
   (for example {_q(EXAMPLE_STATES)}). Write only what the passage supports; the examples show
   the form, not the content.
3. Actions. Every action or event as a short verb phrase (for example
   {_q(EXAMPLE_ACTIONS[:1])}). Include implicit actions: what the passage implies happened
   without a verb for it (someone who comes back with a medal has taken part and won; a guest
   with a ticket has bought or received it).
4. Questions about each action. Go through the checklist who, whom (to or for whom), what,
   where, when, why and how; ask the ones that matter for this action and answer each from the
   passage: answer_entity_ids holds the ids of the entities that answer it, answer_text a short
   answer when no entity fits. When the passage does not answer a question, leave both empty
   (do not write "unknown" or "none"): it stays open, and later passages may answer it.
5. What may come next. Up to three questions about outcomes the passage sets up but does not
   settle (for example {_q(EXAMPLE_QUESTIONS)}), each with the ids of the entities it concerns.

Reply with one JSON object of this shape:
{{"entities": [{{"id": "e1", "name": "...", "roles": [{{"role": "...", "states": ["..."]}}]}}],
 "verb_phrases": [{{"phrase": "...", "questions": [{{"kind": "who", "question": "Who ...?",
   "answer_entity_ids": ["e1"], "answer_text": ""}}]}}],
 "forward_questions": [{{"question": "When will ...?", "entity_ids": ["e1"]}}]}}
kind is one of who, whom, what, where, when, how, why. Keep lists short; do not repeat items."""

SPACETIME = f"""[GSW:spacetime] You tie the participants of a story passage to places and times.
You get the passage and its entities (id: name). Group together the entities that the
passage puts at the same place, and those it puts at the same time. An entity belongs to a
group when the passage places it there, directly or through an event it takes part in. Give
each group's place or time as the passage words it (for example {_q(EXAMPLE_PLACES)},
{_q(EXAMPLE_TIMES)}). When the passage shows entities together but names no place (or no
time) for them, still group them, with value null: a place or time named later reaches them.
Reply with one JSON object: {{"links": [{{"kind": "space", "value": "...", "entity_ids": ["e1"]}},
{{"kind": "time", "value": null, "entity_ids": ["e1", "e2"]}}]}}. Reply {{"links": []}} when the
passage puts no entities together and gives no place and no time."""

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

SUMMARY = """[GSW:entity-summary] Write a short factual account of what one chapter of a story
says about one entity, from structured facts listed in story order: the entity's roles and
states, the actions it takes part in, and where and when it is. Name every place and date the
facts give and the role the entity had there. Add nothing the facts do not state. Plain prose,
at most five sentences."""

NER = """[GSW:question-entities] List the named things a question is about: people, places,
dates, named events or activities, organisations and objects. Copy each as the question
writes it. Reply with one JSON object: {"entities": ["..."]}."""


def coref_messages(text: str) -> Messages:
    return [{"role": "system", "content": COREF}, {"role": "user", "content": f"Passage:\n{text}"}]


def situate_messages(chapter: str, chunk: str) -> Messages:
    return [{"role": "system", "content": SITUATE},
            {"role": "user", "content": f"Chapter:\n{chapter}\n\nExcerpt:\n{chunk}"}]


def operator_messages(chunk: str, context: str = "") -> Messages:
    head = f"Background (where this passage sits): {context}\n\n" if context else ""
    return [{"role": "system", "content": OPERATOR}, {"role": "user", "content": f"{head}Passage:\n{chunk}"}]


def spacetime_messages(chunk: str, entities: list[tuple[str, str]]) -> Messages:
    listing = "\n".join(f"{eid}: {name}" for eid, name in entities)
    return [{"role": "system", "content": SPACETIME},
            {"role": "user", "content": f"Passage:\n{chunk}\n\nEntities:\n{listing}"}]


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


def summary_messages(chapter_title: str, name: str, facts: list[str]) -> Messages:
    body = "\n".join(f"- {f}" for f in facts) or "- (no facts recorded)"
    return [{"role": "system", "content": SUMMARY},
            {"role": "user", "content": f"Chapter: {chapter_title}\nEntity: {name}\nFacts in story order:\n{body}"}]


def ner_messages(question: str) -> Messages:
    return [{"role": "system", "content": NER}, {"role": "user", "content": f"Question: {question}"}]
