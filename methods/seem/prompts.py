"""Every prompt SEEM sends, written for this framework with invented examples only. Each
system message opens with a `[SEEM:<kind>]` tag so logs, caches and the scripted test server
can tell the kinds apart.

Changing any text here changes the cache keys of that call kind: bump PROMPT_VERSION so that
index folders built with older prompts are not reused.
"""

from __future__ import annotations

import json

PROMPT_VERSION = "seem-prompts-1"

Messages = list[dict[str, str]]

FRAME = """[SEEM:frame] You turn one passage (a story chapter or a dated conversation) into an
episodic event frame (JSON).
- summary: 1-3 sentences saying what happens in the passage.
- events: up to 5 of the passage's events, most important first. For each event give
  participants (names as written), action (a short clause), time, time_raw, location,
  reason (why it happened) and method (how it was done). Use "" when the passage does not say.
- time_raw is the time expression as written ("last Sunday", "two years ago"). time is the
  same moment made absolute using the passage date: e.g. with passage date 2031-04-10,
  "yesterday" becomes "2031-04-09" and "last month" becomes "2031-03". When the passage has no
  date, copy any date written in the text, else "".
Example: {"summary": "Mira Tolk repaired a kite with her nephew before the beach festival.",
 "events": [{"participants": ["Mira Tolk", "Jonas"], "action": "repaired a torn kite",
 "time": "2031-04-09", "time_raw": "yesterday", "location": "her garage",
 "reason": "the beach festival was the next day", "method": "with tape and fishing line"}]}
Reply with one JSON object only."""

FACTS = """[SEEM:facts] You extract relational facts from one passage as quadruples (JSON):
subject, predicate, object, time. subject and object are short names of people, places,
organisations, objects or activities; predicate is a short verb phrase; time is when the fact
holds, made absolute using the passage date when possible ("" when no time is given).
Keep the most informative facts, at most 10; no duplicates.
Example: {"facts": [{"subject": "Mira Tolk", "predicate": "works at", "object": "Harbour Bakery",
 "time": "2031"}, {"subject": "Mira Tolk", "predicate": "repaired kite with", "object": "Jonas",
 "time": "2031-04-09"}]}
Reply with one JSON object only."""

JUDGE = """[SEEM:fuse-judge] You decide whether two memory frames describe the same event or
episode (the same happening, told in two places), so that they can be merged.
- strong: clearly the same event (same participants, action and time or place).
- moderate: very likely the same episode, e.g. a plan and its outcome, or a question and its
  answer about one happening.
- weak: different events, even if the people or the topic are the same.
Reply with one JSON object: {"level": "strong" | "moderate" | "weak", "reason": "..."}"""

MERGE = """[SEEM:fuse-merge] You merge two memory frames that describe the same event into one
frame (JSON with summary and events, the same shape as the inputs). Keep every distinct
detail from both (participants, times, places, reasons, methods), drop repetitions, keep
absolute times. The summary is 1-3 sentences. Reply with one JSON object only."""


def _date_line(date: str | None) -> str:
    return f"Passage date: {date}" if date else "Passage date: unknown (use dates written in the text)"


def frame_messages(text: str, date: str | None) -> Messages:
    return [{"role": "system", "content": FRAME},
            {"role": "user", "content": f"{_date_line(date)}\n\nPassage:\n{text}"}]


def facts_messages(text: str, date: str | None) -> Messages:
    return [{"role": "system", "content": FACTS},
            {"role": "user", "content": f"{_date_line(date)}\n\nPassage:\n{text}"}]


def judge_messages(first: str, second: str) -> Messages:
    return [{"role": "system", "content": JUDGE},
            {"role": "user", "content": f"Frame A:\n{first}\n\nFrame B:\n{second}"}]


def merge_messages(first: dict, second: dict) -> Messages:
    return [{"role": "system", "content": MERGE},
            {"role": "user", "content": "Frame A:\n" + json.dumps(first, ensure_ascii=False)
             + "\n\nFrame B:\n" + json.dumps(second, ensure_ascii=False)}]
