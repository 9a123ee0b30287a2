"""EpBench item grounding: text checks shared by the grounding pass and the deterministic matcher.

An LLM judge can copy ground-truth items into `identified_items` and credit them although the
answer never states them. Everything here is model-free and answers one question: does the
answer text itself assert this item? Dates are compared after parsing (so "13 September 2025"
supports "September 13, 2025"), names and places after normalisation with light fuzziness, and
sentences that decline or deny ("I cannot find...", "no other people were involved") support
nothing, so a refusal that repeats the question's cue asserts no item.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from ..answer_text import (
    find_dates,
    is_refusal_sentence,
    normalize,
    parse_date,
    sentences,
    tokens,
    wordset,
)


def assertive_text(answer: str) -> str:
    """The answer without the sentences that decline, deny or say the material is silent."""
    return "\n".join(s for s in sentences(answer) if not is_refusal_sentence(s))


def words_beyond(text: str, question: str) -> list[str]:
    """The content words of `text` that the question does not use."""
    asked = set(content_tokens(question))
    return [t for t in content_tokens(text) if t not in asked]


def asserts_something(answer: str, question: str = "", min_words: int = 3) -> bool:
    """Whether the answer, outside refusals, says at least a few words the question did not."""
    return len(words_beyond(assertive_text(answer), question)) >= min_words


# -- phrase support --------------------------------------------------------------------------
FUZZY_RATIO = 0.86


def _digits(ts: Iterable[str]) -> list[str]:
    return [t for t in ts if t.isdigit()]


def close_enough(a: str, b: str) -> bool:
    """difflib's ratio >= FUZZY_RATIO, its two cheap upper bounds first. rapidfuzz is 8-19x
    faster and decides the bundled runs' pairs alike, but scores a longest common subsequence,
    so it accepts typos difflib does not ("tehtre performance" for "theater performance"); and
    this test is under 1% of grounding's time (scripts/bench_fuzzy.py), so difflib stays."""
    sm = SequenceMatcher(None, a, b)
    return sm.real_quick_ratio() >= FUZZY_RATIO and sm.quick_ratio() >= FUZZY_RATIO \
        and sm.ratio() >= FUZZY_RATIO


def phrase_in(item: str, text: str, fuzzy: bool = True) -> bool:
    """Whether `item` occurs in `text` as whole words, allowing small typos when `fuzzy`."""
    it, tt = tokens(item), tokens(text)
    if not it or not tt:
        return False
    if f" {' '.join(it)} " in f" {' '.join(tt)} ":
        return True
    joined = " ".join(it)
    if not fuzzy or len(joined) < 5:
        return False
    prefixes = {t[:3] for t in it}
    n = len(it)
    for i in range(len(tt)):
        if tt[i][:3] not in prefixes and (i + n - 1 >= len(tt) or tt[i + n - 1][:3] not in prefixes):
            continue
        for w in (n - 1, n, n + 1):
            window = tt[i:i + w]
            if not window or len(window) < w or _digits(window) != _digits(it):
                continue
            if close_enough(joined, " ".join(window)):
                return True
    return False


_STOP = wordset("a an the of in on at to and or for with by from as is was were be been it its "
                "this that these those their his her they he she them event events")


def content_tokens(text: str) -> list[str]:
    return [t for t in tokens(text) if t not in _STOP]


def stem(t: str) -> str:
    """Plural-insensitive form of a word ("contests" -> "contest"; "class" stays)."""
    return t[:-1] if len(t) > 4 and t.endswith("s") and not t.endswith("ss") else t


def coverage(item: str, text: str) -> float:
    """Share of the item's content words (plural-insensitive) that occur in the text."""
    it = {stem(t) for t in content_tokens(item)}
    if not it:
        return 0.0
    tt = {stem(t) for t in tokens(text)}
    return len(it & tt) / len(it)


def item_supported(item: str, answer: str) -> bool:
    """Whether the answer asserts `item` (the judge's wording of something it found)."""
    text = assertive_text(answer)
    date = parse_date(item)
    if date is not None:
        return any(d.key == date.key or (date.day is None and (d.year, d.month) == (date.year, date.month))
                   for d in find_dates(text))
    if phrase_in(item, text):
        return True
    return len(content_tokens(item)) >= 3 and coverage(item, text) >= 0.75


# -- grounding a judgment --------------------------------------------------------------------
FULL, PARTIAL = "full", "partial"
STRING_KINDS = ("date", "location", "person")


def _short_form(gold: str, text: str, known: Iterable[str], whole_name: bool = False) -> bool:
    """A place named by part of its name ("Snug Harbor", "the Natural History Museum").

    One sentence must hold at least half of the name's words, among them a word no other known
    place uses; without a list of known places nothing is distinctive and this never holds.
    With `whole_name` (grounding version 7) those words must also be a name of their own
    (`_own_name`).
    """
    others = {stem(w) for v in known if normalize(v) != normalize(gold) for w in content_tokens(v)}
    if not others:
        return False
    distinctive = {stem(w) for w in content_tokens(gold)} - others
    return any(distinctive & {stem(t) for t in tokens(s)} and coverage(gold, s) >= 0.5
               and (not whole_name or _own_name(gold, s, distinctive, others))
               for s in sentences(text))


# a name as written: capitalised words, joined by "of" / "the" ("Museum of the City of New York")
_WRITTEN_NAME = re.compile(r"[A-Z][\w'\u2019.-]*(?:\s+(?:(?:of|the)\s+)*[A-Z][\w'\u2019.-]*)*")


def _own_name(gold: str, sentence: str, distinctive: set[str], others: set[str]) -> bool:
    """Grounding version 7: the gold's distinctive words are written as a name of their own, not as
    part of another one ("High Line Cultural Center" is not "Snug Harbor Cultural Center"). The
    written name (capitalised words) that holds them may add no word beyond the gold's, bar a
    sentence's first word that is no word of another known place ("Visited Snug Harbor"); in
    lower-case text, no word of another known place may stand right before or after them."""
    own = {stem(w) for w in tokens(gold)}
    names = [m for m in _WRITTEN_NAME.finditer(sentence)
             if distinctive & {stem(t) for t in tokens(m.group(0))}]
    for m in names:
        words = [stem(t) for t in tokens(m.group(0))]
        start = 1 if m.start() == 0 and words and words[0] not in others else 0
        if all(w in own for w in words[start:]):
            return True
    if names:
        return False
    ts = [stem(t) for t in tokens(sentence)]
    for i, t in enumerate(ts):
        if t not in distinctive:
            continue
        a = b = i
        while a > 0 and ts[a - 1] in own:
            a -= 1
        while b + 1 < len(ts) and ts[b + 1] in own:
            b += 1
        if not {ts[k] for k in (a - 1, b + 1) if 0 <= k < len(ts)} & others:
            return True
    return False


GENERIC_EVENT_WORDS = wordset(
    "event night festival show exhibition workshop performance tournament competition fair class "
    "session party meeting conference contest tour day gathering celebration")


def mask(text: str, values: Iterable[str], keep: str) -> str:
    """Normalised text with every known value except `keep` blanked out."""
    nt, nk = f" {normalize(text)} ", normalize(keep)
    for v in values:
        nv = normalize(v)
        if nv and nv != nk:
            nt = nt.replace(f" {nv} ", "  ")
    return nt


def gold_support(gold: str, text: str, kind: str | None, known: Iterable[str] = (),
                 generic: frozenset[str] = GENERIC_EVENT_WORDS, whole_name: bool = False) -> str | None:
    """How the (assertive) text supports one gold item: FULL, PARTIAL (worth 0.5 at most) or None.

    PARTIAL: a date's month and year without its day, or a person's first or last name alone
    (after blanking out other known full names, so "Owen Thomas" never half-supports
    "Scarlett Thomas"). An event type is FULL when a word only it uses ("karaoke") occurs.
    `whole_name` (version 7): a place's short form must be a name of its own (`_short_form`).
    """
    date = parse_date(gold) if kind in (None, "date") else None
    if date is not None:
        mentions = find_dates(text)
        if any(d.key == date.key for d in mentions):
            return FULL
        same_month = any(d.day is None and (d.year, d.month) == (date.year, date.month)
                         for d in mentions)
        return PARTIAL if same_month else None
    if phrase_in(gold, text):
        return FULL
    words = content_tokens(gold)
    if kind == "person" and len(words) >= 2:
        masked = mask(text, known, gold)
        return PARTIAL if any(f" {w} " in masked for w in (words[0], words[-1])) else None
    if kind == "location":
        return FULL if _short_form(gold, text, known, whole_name) else None
    if kind == "event_type":
        common = {stem(w) for w in generic}
        distinctive = [w for w in words if len(w) >= 5 and stem(w) not in common]
        tt = {stem(t) for t in mask(text, known, gold).split()}
        return FULL if any(stem(w) in tt for w in distinctive) else None
    return None


@dataclass
class Grounded:
    identified_items: list[str]
    unsupported_items: list[str]
    matching_score: list[float]
    credited_absent_gold: list[str] = field(default_factory=list)
    left_to_judge: list[str] = field(default_factory=list)
    recredited: list[str] = field(default_factory=list)  # version 2 (evidence.py) only

    @property
    def n_pred(self) -> int:
        """Supported claims; never fewer than the credited gold items, so precision stays <= 1."""
        return max(len(self.identified_items), sum(1 for s in self.matching_score if s > 0))


def unnamed_descriptions(text: str, known: Iterable[str], generic: frozenset[str] = GENERIC_EVENT_WORDS,
                         question: str = "") -> int:
    """Clauses that describe something (two words the question did not use) but name no known
    event type, neither by name nor by a word only it uses: room for paraphrased event types."""
    known = list(known)
    asked = set(content_tokens(question))
    n = 0
    for clause in re.split(r",\s*|;\s*|\n|\band\b|\bthen\b", text):
        if len([w for w in content_tokens(clause) if w not in asked]) < 2:
            continue
        if not any(phrase_in(v, clause, fuzzy=False) or gold_support(v, clause, "event_type", known, generic) == FULL
                   for v in known):
            n += 1
    return n


def ground(answer: str, gold: Sequence[str], scores: Sequence[float], identified: Sequence[str],
           kind: str | None, known: Iterable[str] = (),
           generic: frozenset[str] = GENERIC_EVENT_WORDS, question: str = "") -> Grounded:
    """Keep only the judge's claims and credits that the answer text supports.

    `gold` and `scores` are the de-duplicated gold list and the judge's scores for it; `kind` is
    the kind of item the question asks for (date, location, person, event_type, chapter).
    Dates, places and people must occur in the answer (a place may be named by a distinctive
    part of its name). Event types may be paraphrased ("a coding marathon"), so a credited event
    type the text does not name is left to the judge while the answer has room for it: a
    supported claim, or a clause, that names no known event type. A chapter-level credit is kept
    unless the answer asserts nothing.
    """
    text = assertive_text(answer)
    supported = [i for i in identified if item_supported(i, answer)]
    unsupported = [i for i in identified if i not in supported]
    out = Grounded(supported, unsupported, [float(s) for s in scores])
    if kind == "chapter":
        if not asserts_something(answer):
            out.credited_absent_gold = [g for g, s in zip(gold, scores, strict=True) if s > 0]
            out.matching_score = [0.0] * len(gold)
        return out
    known = list(known)
    named = set(gold) | set(known)
    room = 0
    if kind == "event_type":
        asked = set(content_tokens(question))
        spare = [i for i in supported if set(content_tokens(i)) - asked  # the cue is no claim
                 and not any(phrase_in(v, i, fuzzy=False) for v in named)]
        room = max(len(spare), unnamed_descriptions(text, named, generic, question))
    for k, (g, s) in enumerate(zip(gold, scores, strict=True)):
        if s <= 0:
            continue
        how = gold_support(g, text, kind, known, generic)
        if how == FULL:
            continue
        if how == PARTIAL:
            out.matching_score[k] = min(s, 0.5)
        elif room > 0:
            room -= 1
            out.left_to_judge.append(g)
        else:
            out.matching_score[k] = 0.0
            out.credited_absent_gold.append(g)
    return out
