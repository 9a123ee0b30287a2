"""Every prompt GSW sends, written for this framework. Each system message opens with a
`[GSW:<kind>]` tag so logs, caches and the scripted test server can tell the kinds apart.

Changing any text here changes the cache keys of that call kind: bump PROMPT_VERSION so that
index folders built with older prompts are not reused.
"""

from __future__ import annotations

PROMPT_VERSION = "gsw-prompts-1"

Messages = list[dict[str, str]]

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

OPERATOR = """[GSW:operator] You turn a short passage of a story into a semantic workspace (JSON).

1. Entities. List every participant the passage mentions: people, groups, organisations,
   places, dates and times, objects, events and activities, abstract things. Give each an id
   (e1, e2, ...) and its name in the fullest form the passage uses.
2. Roles and states. For each entity, give the roles it plays in this passage as short noun
   phrases ("workshop instructor", "venue of the festival", "date of the gala"), and for each
   role the states that describe its condition in that role ("nervous", "crowded",
   "finished"). Use only what the passage supports.
3. Verb phrases. For each action or event, give a short verb phrase ("demonstrated cat
   leaps") and the valence questions that matter for it: who acted, on whom or what, where,
   when, and how or why when the passage says. Answer each question from the passage:
   answer_entity_ids holds the ids of the entities that answer it; answer_text holds a short
   free-text answer when no entity fits. When the passage does not answer a question, leave
   both empty: the question stays open for later passages.

Reply with one JSON object of this shape:
{"entities": [{"id": "e1", "name": "...", "roles": [{"role": "...", "states": ["..."]}]}],
 "verb_phrases": [{"phrase": "...", "questions": [{"kind": "who", "question": "Who ...?",
   "answer_entity_ids": ["e1"], "answer_text": ""}]}]}
kind is one of who, whom, what, where, when, how, why. Keep lists short; do not repeat items."""

SPACETIME = """[GSW:spacetime] You tie the participants of a story passage to places and times.
You get the passage and its entities (id: name). Group together the entities that the
passage puts at the same place, and those it puts at the same time. An entity belongs to a
group when the passage places it there, directly or through an event it takes part in. Give
each group's place or time as the passage words it ("Bethpage Black Course", "March 23,
2024", "that evening").
Reply with one JSON object: {"links": [{"kind": "space", "value": "...", "entity_ids": ["e1"]},
{"kind": "time", "value": "...", "entity_ids": ["e1", "e2"]}]}. Reply {"links": []} when the
passage gives no place and no time."""

FORWARD = """[GSW:open-questions] Earlier passages of a story left some questions about actions
unanswered. Read the new passage and answer each question it settles, briefly, with the names
the passage uses (entity_names lists the people, places, dates or things in the answer).
For a question the new passage does not settle, give an empty answer; never guess.
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
    head = f"Where this passage sits: {context}\n\n" if context else ""
    return [{"role": "system", "content": OPERATOR}, {"role": "user", "content": f"{head}Passage:\n{chunk}"}]


def spacetime_messages(chunk: str, entities: list[tuple[str, str]]) -> Messages:
    listing = "\n".join(f"{eid}: {name}" for eid, name in entities)
    return [{"role": "system", "content": SPACETIME},
            {"role": "user", "content": f"Passage:\n{chunk}\n\nEntities:\n{listing}"}]


def forward_messages(chunk: str, questions: list[tuple[str, str, str]]) -> Messages:
    """questions: (number, action phrase, question text)."""
    listing = "\n".join(f"{n}. [action: {phrase}] {q}" for n, phrase, q in questions)
    return [{"role": "system", "content": FORWARD},
            {"role": "user", "content": f"New passage:\n{chunk}\n\nOpen questions:\n{listing}"}]


def same_entity_messages(a: str, b: str) -> Messages:
    return [{"role": "system", "content": SAME_ENTITY},
            {"role": "user", "content": f"First:\n{a}\n\nSecond:\n{b}"}]


def summary_messages(chapter_title: str, name: str, facts: list[str]) -> Messages:
    body = "\n".join(f"- {f}" for f in facts) or "- (no facts recorded)"
    return [{"role": "system", "content": SUMMARY},
            {"role": "user", "content": f"Chapter: {chapter_title}\nEntity: {name}\nFacts in story order:\n{body}"}]


def ner_messages(question: str) -> Messages:
    return [{"role": "system", "content": NER}, {"role": "user", "content": f"Question: {question}"}]
