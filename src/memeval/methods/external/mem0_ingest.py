"""What mem0 is given to remember: each unit's messages, its date, and the `add` calls they make.

mem0's `add` takes chat messages (role + content) scoped to a `user_id`. Units reach methods as
text, so the turns are read back from the loaders' renderings: LoCoMo 'Speaker: text' paragraphs,
LongMemEval 'user: ...' / 'assistant: ...' paragraphs (a reply may span paragraphs), EpBench
chapters as narrative paragraphs. Two ingest plans:
- `session` (the shared-constraint default): one memory (one user_id) per corpus and one `add`
  per unit, in corpus order, holding all of the unit's messages (or `messages_per_add` at a time);
  named speakers keep mem0's multi-speaker convention: the corpus' first speaker is the "user",
  the others are the "assistant", each message prefixed with its speaker's name;
- `speaker_views` (mem0's published LoCoMo recipe): one user_id per speaker, every unit added once
  from each speaker's point of view (that speaker is the "user"), two messages per add.
A unit's date is its timestamp (LoCoMo, LongMemEval) or, failing that, the first full date its
text states (EpBench chapters); it reaches mem0's prompt as the Observation Date (ISO when it can
be read) and is stored with each memory as the date the context shows.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from memeval.datasets.types import Corpus, Unit

from .episodes import iso_date

INGEST = ("session", "speaker_views")
CHAT_ROLES = ("user", "assistant")
SINGLE_VIEW = "memeval"  # the one user_id of the session plan (and of a corpus without speakers)
_PREFIX = re.compile(r"^(?P<speaker>[A-Za-z][\w .'-]{0,39}?):\s")



@dataclass(frozen=True)
class Turn:
    speaker: str | None  # None: a narrative paragraph
    text: str


def unit_date(unit: Unit) -> tuple[str | None, str | None, str | None]:
    """(observation date for mem0's prompt, date shown with each memory, where it came from)."""
    if unit.timestamp:
        return iso_date(unit.timestamp) or unit.timestamp, unit.timestamp, "timestamp"
    found = iso_date(unit.text)
    return (found, found, "text") if found else (None, None, None)


def corpus_speakers(corpus: Corpus) -> list[str]:
    """The corpus' speakers in first-seen order: 'user' and 'assistant' where the turns are so
    labelled (LongMemEval), else the names that open at least two paragraphs and a fifth as many
    as the most frequent name (so a reply's 'Note:' paragraph is not a speaker)."""
    counts: Counter[str] = Counter()
    order: dict[str, int] = {}
    for u in corpus.units:
        for para in _paragraphs(u.text):
            m = _PREFIX.match(para)
            if m:
                name = m.group("speaker").strip()
                counts[name] += 1
                order.setdefault(name, len(order))
    chat = [s for s in counts if s in CHAT_ROLES]
    if chat:
        return sorted(chat, key=order.__getitem__)
    top = max(counts.values(), default=0)
    return sorted((s for s, n in counts.items() if n >= 2 and n * 5 >= top), key=order.__getitem__)


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def turns(unit: Unit, speakers: list[str]) -> list[Turn]:
    """The unit's turns; a paragraph that opens with no known speaker continues the turn before
    it (or, in a unit whose first paragraph has no speaker, is a narrative paragraph)."""
    known = set(speakers)
    out: list[Turn] = []
    for para in _paragraphs(unit.text):
        m = _PREFIX.match(para)
        name = m.group("speaker").strip() if m else None
        if name in known:
            out.append(Turn(name, para[m.end():].strip()))
        elif out and out[-1].speaker is not None:
            out[-1] = Turn(out[-1].speaker, out[-1].text + "\n\n" + para)
        else:
            out.append(Turn(None, para))
    return out


def _is_chat(speakers: list[str]) -> bool:
    return bool(speakers) and {s.lower() for s in speakers} <= set(CHAT_ROLES)


def messages(unit_turns: list[Turn], view: str | None, speakers: list[str]) -> list[dict[str, str]]:
    """The turns as mem0 messages seen from `view` (the speaker who is the "user"; None: the
    corpus' first speaker). user/assistant transcripts keep their roles (flipped only in the
    assistant's own view); named speakers are prefixed with their names, as mem0's own
    multi-speaker example writes them; narrative paragraphs are the user's."""
    chat = _is_chat(speakers)
    me = view if view is not None else (speakers[0] if speakers else None)
    out = []
    for t in unit_turns:
        if t.speaker is None:
            out.append({"role": "user", "content": t.text})
        elif chat:
            role = t.speaker.lower()
            if view is not None and view.lower() == "assistant":
                role = "user" if role == "assistant" else "assistant"
            out.append({"role": role, "content": t.text})
        else:
            out.append({"role": "user" if t.speaker == me else "assistant", "content": f"{t.speaker}: {t.text}"})
    return out


def view_id(name: str) -> str:
    """A mem0 user_id (no whitespace) for a speaker."""
    return re.sub(r"\s+", "_", name.strip()) or SINGLE_VIEW


def plan_adds(corpus: Corpus, ingest: str, messages_per_add: int | None) -> dict[str, Any]:
    """Every `add` call in order: {unit, user_id, messages, observation_date, timestamp}, the views
    (user_ids) and, per unit, its date and where the date came from."""
    if ingest not in INGEST:
        raise ValueError(f"ingest must be one of {INGEST}, not {ingest!r}")
    if messages_per_add is not None and messages_per_add < 1:
        raise ValueError("messages_per_add must be a positive number of messages, or null (the whole unit)")
    speakers = corpus_speakers(corpus)
    views: list[str | None] = list(speakers) if ingest == "speaker_views" and speakers else [None]
    adds: list[dict[str, Any]] = []
    dates: dict[str, dict[str, str | None]] = {}
    for u in corpus.units:
        observed, shown, source = unit_date(u)
        dates[u.id] = {"observation_date": observed, "timestamp": shown, "source": source}
        unit_turns = turns(u, speakers)
        for view in views:
            msgs = messages(unit_turns, view, speakers)
            step = messages_per_add or max(len(msgs), 1)
            for i in range(0, len(msgs), step):
                adds.append({"unit": u.id, "user_id": view_id(view) if view is not None else SINGLE_VIEW,
                             "messages": msgs[i:i + step], "observation_date": observed, "timestamp": shown or ""})
    names = [view_id(v) if v is not None else SINGLE_VIEW for v in views]
    labels = {view_id(v) if v is not None else SINGLE_VIEW: (v or "") for v in views}
    return {"adds": adds, "views": names, "view_labels": labels, "units": [u.id for u in corpus.units],
            "dates": dates, "speakers": speakers}
