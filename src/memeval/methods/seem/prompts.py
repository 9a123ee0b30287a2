"""Every prompt SEEM sends, written for this framework with invented examples only. Each
system message opens with a `[SEEM:<kind>]` tag so logs, caches and the scripted test server
can tell the kinds apart.

Changing any text here changes the cache keys of that call kind. A prompt change is a new
prompt version (`prompt_version` in conf/method/seem.yaml, part of the index identity); the older
version's texts stay here, so runs saved under it replay their cached calls unchanged:
- 2: the judge gives a coherence level, then a reason, and the level alone decides the merge;
- 3: the judge first says, slot by slot, whether the frames are one event (participants, time,
  place), then the level, then the reason (`JUDGE_V3`, schemas.SameEventVerdict). Frame, facts
  and merge prompts are those of version 2 (their cached calls are reused).
The frame retry turn (`frame_retry_turn`, `frame_retry: true`) is versioned by RETRY_VERSION.
"""

from __future__ import annotations

import json

PROMPT_VERSIONS = (2, 3)
RETRY_VERSION = "seem-frame-retry-1"


def prompt_tag(version: int) -> str:
    """The index-identity name of a prompt version ("seem-prompts-2" as saved indexes hash it)."""
    if version not in PROMPT_VERSIONS:
        raise ValueError(f"seem prompt_version must be one of {PROMPT_VERSIONS}, not {version!r}")
    return f"seem-prompts-{version}"

Messages = list[dict[str, str]]

# One worked example per extraction kind, sent as its own user/assistant turn (an invented
# passage and its reply) rather than inside the instructions: a 0.5B model given a bare example
# object in the system message copied its values into every frame (measured on LoCoMo). The
# guard (methods/seem/guard.py) still drops any of these values that a reply repeats while the
# passage does not contain them.
EXAMPLE_PASSAGE = """Passage date: 2031-04-10

Passage:
Mira Tolk: I finally fixed the torn kite yesterday, in my garage, with tape and fishing line.
Odo Brandt: Just in time! The beach festival is tomorrow, right?
Mira Tolk: Yes. And I start at Harbour Bakery next month."""
EXAMPLE_FRAME = {"summary": "Mira Tolk tells Odo Brandt she repaired her kite for the beach festival "
                            "and will start a job at Harbour Bakery.",
                 "events": [{"participants": ["Mira Tolk"], "action": "repaired a torn kite",
                             "time": "2031-04-09", "time_raw": "yesterday", "location": "her garage",
                             "reason": "the beach festival on 2031-04-11",
                             "method": "with tape and fishing line"},
                            {"participants": ["Mira Tolk"], "action": "will start working at Harbour Bakery",
                             "time": "2031-05", "time_raw": "next month", "location": "Harbour Bakery",
                             "reason": "", "method": ""}]}
EXAMPLE_FACTS = {"facts": [{"subject": "Mira Tolk", "predicate": "repaired", "object": "kite",
                            "time": "2031-04-09"},
                           {"subject": "Mira Tolk", "predicate": "will work at", "object": "Harbour Bakery",
                            "time": "2031-05"}]}
# The worked example's people: a summary naming one of them (when the passage does not) was
# written from the example (seen once in 19 real 0.5B frames).
EXAMPLE_NAMES = ("Mira Tolk", "Odo Brandt")
EXAMPLE_VALUES = (*EXAMPLE_NAMES, "Mira", "Odo", "repaired a torn kite", "her garage",
                  "the beach festival on 2031-04-11", "with tape and fishing line",
                  "will start working at Harbour Bakery", "Harbour Bakery", "kite", "repaired",
                  "will work at", "2031-04-09", "2031-05", "2031-04-11",
                  # the first prompt version's example values (seem-prompts-1), still recognised
                  "Jonas", "the beach festival was the next day", "repaired kite with", "works at")

FRAME = """[SEEM:frame] You turn one passage (a story chapter or a dated conversation) into an
episodic event frame (JSON).
- summary: 1-3 sentences in your own words saying what happens in the passage (not its first line).
- events: up to 5 of the passage's events, most important first. For each event give
  participants (names as written in the passage), action (a short clause), time, time_raw,
  location, reason (why it happened) and method (how it was done). Use "" when the passage does
  not say. Every value must come from the passage you are given, never from the example.
- time_raw is the time expression as written ("last Sunday", "two years ago"). time is the
  same moment made absolute using the passage date. When the passage has no date, copy any
  date written in the text, else "".
Reply with one JSON object only."""

FACTS = """[SEEM:facts] You extract relational facts from one passage as quadruples (JSON):
subject, predicate, object, time. subject and object are short names of people, places,
organisations, objects or activities that the passage mentions; predicate is a short verb
phrase; time is when the fact holds, made absolute using the passage date when possible ("" when
no time is given). Keep the most informative facts, at most 10; no duplicates. Every value must
come from the passage you are given, never from the example.
Reply with one JSON object only."""

JUDGE = """[SEEM:fuse-judge] You decide whether two memory frames describe the same event or
episode (the same happening, told in two places), so that they can be merged.
- strong: clearly the same event (same participants, action and time or place).
- moderate: very likely the same episode, e.g. a plan and its outcome, or a question and its
  answer about one happening.
- weak: different events, even if the people or the topic are the same.
Reply with one JSON object: {"level": "strong" | "moderate" | "weak", "reason": "..."}"""

# Version 3: identity before coherence. Under version 2 the 0.5B judge wrote the level first and
# then a reason that often contradicted it ("Frame B describes a different event" with
# "moderate"); here the slots that make an event one event come first, the level after them.
JUDGE_V3 = """[SEEM:fuse-judge] You decide whether two memory frames tell of one and the same
event (one happening, told in two places), so that they can be merged. Answer in this order:
- same_participants: "yes" when the same people take part, "no" when the frames name different
  people, "unclear" when one names nobody.
- same_time: "yes" when the dates fit one moment, "no" when they give different days or months,
  "unclear" when one gives no date.
- same_place: "yes", "no" (different places), or "unclear" (one names no place).
- same_event: "yes" only when it is one happening. The same people, topic or hobby on different
  occasions is not one event. Any "no" above means "no".
- level: strong (clearly the same event), moderate (one episode told in parts, e.g. a plan and
  its outcome, a question and its answer), weak (different events). weak whenever same_event is "no".
- reason: one short sentence.
Reply with one JSON object only."""

FRAME_RETRY = """Your reply {problems}. Read the passage again and reply with a corrected JSON
object: a summary of 1-2 sentences in your own words (never starting with the passage's own
words), and the events of this passage: who did what, when and where, with names as the passage
writes them."""
RETRY_PROBLEMS = {"summary_copies_opening": "copies the opening of the passage as its summary",
                  "no_events": "lists no event of this passage"}

MERGE = """[SEEM:fuse-merge] You merge two memory frames that describe the same event into one
frame (JSON with summary and events, the same shape as the inputs). Keep every distinct
detail from both (participants, times, places, reasons, methods), drop repetitions, keep
absolute times. The summary is 1-3 sentences. Reply with one JSON object only."""


def _date_line(date: str | None) -> str:
    return f"Passage date: {date}" if date else "Passage date: unknown (use dates written in the text)"


def _with_example(system: str, example_reply: dict, text: str, date: str | None) -> Messages:
    return [{"role": "system", "content": system},
            {"role": "user", "content": EXAMPLE_PASSAGE},
            {"role": "assistant", "content": json.dumps(example_reply, ensure_ascii=False)},
            {"role": "user", "content": f"{_date_line(date)}\n\nPassage:\n{text}"}]


def frame_messages(text: str, date: str | None) -> Messages:
    return _with_example(FRAME, EXAMPLE_FRAME, text, date)


def facts_messages(text: str, date: str | None) -> Messages:
    return _with_example(FACTS, EXAMPLE_FACTS, text, date)


def judge_messages(first: str, second: str, version: int = 3) -> Messages:
    system = JUDGE if version == 2 else JUDGE_V3
    return [{"role": "system", "content": system},
            {"role": "user", "content": f"Frame A:\n{first}\n\nFrame B:\n{second}"}]


def frame_retry_turn(messages: Messages, reply: str, problems: list[str]) -> Messages:
    """The frame call again, with the first reply and what was wrong with it (a new request, so
    a new cache key; the first call's key, and its cached reply, are unchanged)."""
    said = " and ".join(RETRY_PROBLEMS[p] for p in problems)
    return [*messages, {"role": "assistant", "content": reply},
            {"role": "user", "content": FRAME_RETRY.format(problems=said)}]


def merge_messages(first: dict, second: dict) -> Messages:
    return [{"role": "system", "content": MERGE},
            {"role": "user", "content": "Frame A:\n" + json.dumps(first, ensure_ascii=False)
             + "\n\nFrame B:\n" + json.dumps(second, ensure_ascii=False)}]
