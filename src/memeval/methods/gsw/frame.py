"""Conversations as the Operator reads them: who says each line, and when the session took place.

A chapter of prose is chunked by sentences (operator.make_chunks). A conversation session
('Name: text' turns separated by blank lines, as the LoCoMo and LongMemEval loaders write it)
chunked that way loses its speakers: a chunk may begin inside a turn ("Unfortunately, I also lost
my job ..."), and the turns run together on one line, so a small model gave one speaker the
other's lines (LoCoMo conv-30, shipped index: Gina given Jon's lost banking job, Jon given Gina's
clothing store). Here a conversation is chunked at turn boundaries, each line starts with its
speaker, and first-person pronouns are marked with the speaker ("my [Jon]"), second-person ones
with the other speaker when the session has exactly two. The marks add words and never remove
any, so every name, role and value the Operator copies from a line is still in the chunk's text.

A unit with a timestamp gets a `Date: ...` line at the head of each chunk and of the text the
situating call reads, so the space-time coupler can bind the session's date.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..output_guard import norm

_TURN = re.compile(r"^([A-Za-z][\w'.-]*(?: [A-Z][\w'.-]*)?): (\S.*)$", re.S)
_FIRST = re.compile(r"\b(?:I(?:['\u2019](?:m|ve|ll|d))?|me|my|mine|myself)\b(?!['\u2019\]]|\.\w)", re.I)
_SECOND = re.compile(r"\b(?:you(?:['\u2019](?:re|ve|ll|d))?|your|yours|yourself|yourselves)\b(?!['\u2019\]])", re.I)
_MARK = re.compile(r" \[[^\]]{1,60}\]")
_LINE = re.compile(r"^([A-Za-z][\w'.-]*(?: [A-Z][\w'.-]*)?): (.*)$")
DATE_PREFIX = "Date: "


@dataclass(frozen=True)
class Turn:
    speaker: str
    text: str


def parse_turns(text: str) -> list[Turn] | None:
    """The session's turns, or None when the text is not a conversation (a paragraph that is not
    'Name: text', or fewer than two turns)."""
    paras = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    turns = []
    for p in paras:
        m = _TURN.match(p)
        if m is None:
            return None
        turns.append(Turn(m.group(1), " ".join(m.group(2).split())))
    return turns if len(turns) >= 2 else None


def mark_pronouns(text: str, speaker: str, addressee: str | None) -> str:
    """'I' / 'my' / 'me' ... followed by ' [speaker]'; 'you' / 'your' ... by ' [addressee]' when
    there is exactly one other speaker. The pronoun itself stays."""
    text = _FIRST.sub(lambda m: f"{m.group(0)} [{speaker}]", text)  # not the "i" of "i.e."
    if addressee:
        text = _SECOND.sub(lambda m: f"{m.group(0)} [{addressee}]", text)
    return text


def unmark(text: str) -> str:
    """A framed line without its pronoun marks (what the speaker said)."""
    return _MARK.sub("", text)


def _addressees(turns: list[Turn]) -> dict[str, str | None]:
    speakers = list(dict.fromkeys(t.speaker for t in turns))
    if len(speakers) != 2:
        return dict.fromkeys(speakers)
    return {speakers[0]: speakers[1], speakers[1]: speakers[0]}


def framed_lines(turns: list[Turn], split: Callable[[str], list[str]], size: int) -> list[tuple[str, int]]:
    """Each turn as one 'Speaker: text' line with its pronouns marked, with its sentence count;
    a turn of more than 2 x `size` sentences becomes lines of `size` sentences, each with its
    speaker (a long turn still fits one chunk's worth of text per Operator call)."""
    to = _addressees(turns)
    out: list[tuple[str, int]] = []
    for t in turns:
        sents = split(t.text) or [t.text]
        pieces = [sents] if len(sents) <= 2 * size else [sents[i:i + size] for i in range(0, len(sents), size)]
        for p in pieces:
            out.append((f"{t.speaker}: {mark_pronouns(' '.join(p), t.speaker, to[t.speaker])}", len(p)))
    return out


def conversation_chunks(turns: list[Turn], split: Callable[[str], list[str]], size: int = 3,
                        overlap: int = 0, min_words: int | None = None) -> list[str]:
    """Chunks of whole lines, one per line of text: a chunk closes once it holds `size` sentences
    (and `min_words` words); consecutive chunks share `overlap` lines."""
    lines = framed_lines(turns, split, size)
    chunks: list[str] = []
    i = 0
    while i < len(lines):
        end, sents, words = i, 0, 0
        while end < len(lines) and (sents < size or (min_words and words < min_words)):
            sents += lines[end][1]
            words += len(unmark(lines[end][0]).split())
            end += 1
        chunks.append("\n".join(line for line, _ in lines[i:end]))
        if end >= len(lines):
            break
        i = max(end - overlap, i + 1)
    return chunks


def speaker_lines(chunk: str) -> list[tuple[str, str]]:
    """(speaker, what they said, pronoun marks removed) for each line of a framed chunk; [] when
    a line (other than the date) is not 'Speaker: text', i.e. the chunk is not framed."""
    out = []
    for line in chunk.splitlines():
        if line.startswith(DATE_PREFIX) and not out:
            continue
        m = _LINE.match(line)
        if m is None:
            return []
        out.append((m.group(1), unmark(m.group(2))))
    return out


def dated(text: str, timestamp: str | None) -> str:
    """The text with its unit's date as a first line (unchanged without a timestamp)."""
    return f"{DATE_PREFIX}{timestamp}\n{text}" if timestamp else text


def strip_speaker_marks(text: str, speakers: list[str]) -> str:
    """`text` without the frame's ' [Name]' marks of these speakers (other brackets, such as a
    shared photo's caption, stay). The Operator copies marks into states, sometimes with the
    wrong name: conv-30, a real 0.5B reply gave Jon "lost my [Jon] job at Door Dash", Gina's line."""
    names = "|".join(re.escape(s) for s in speakers)
    return re.sub(rf" \[(?:{names})\]", "", text, flags=re.I) if names else text


def said_by_other(value: str, entity: str, lines: list[tuple[str, str]]) -> str | None:
    """The speaker who said `value` in the first person, when that is not `entity` and no line of
    `entity` says it: the Operator gave one speaker another's words. `value` comes without
    speaker marks (kinds._unmarked strips them first): a copied mark is not evidence of who
    said it (the model rewrites it); the line's words are."""
    key = norm(value)
    if not key or not _FIRST.search(value):
        return None
    who = {s for s, said in lines if f" {key} " in f" {norm(said)} "}
    speakers = {norm(s) for s, _ in lines}
    if norm(entity) not in speakers or len(who) != 1:
        return None
    other = next(iter(who))
    return other if norm(other) != norm(entity) else None
