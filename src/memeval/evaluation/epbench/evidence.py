"""EpBench grounding version 2: no credit without evidence in the answer, event contents included.

Version 1 (grounding.py `ground`) left a credited event type to the judge whenever the answer had
"room" for a paraphrase, so a judge that credited every gold event for "a day of joy and
celebration" kept its credit. Version 2 keeps a credit only for what the answer gives evidence of:

- dates, places, people: as version 1 (the value, a partial date, a first or last name), but a
  clause that denies ("not on May 31, 2024 but on ...") supports nothing, as a refusal does not;
- an event type: its name (whole words: "the performance" is not "Theater Performance"), a word
  of its name no other type uses ("hackathon"), an activity word
  of that type (below), or the detail of one of this book's chapters of that type ("cat leaps");
- a chapter account ("Full event details"): someone else present in that chapter or its detail
  keeps the judge's credit; an account that asserts something beyond the question, names no
  other place or person than the chapter's, but gives none of its content keeps half at most (the
  labelling rule: "right but misses its main content"); one that names another place or another
  known person keeps nothing.

Activity words come from events.json, which lists 2,000 events with a one-line detail each
("Demonstrated cat leaps", "Debugged code"): a word is an activity word of a type when the type's
details use it at least twice and hold most of its uses, and this book's chapters of other types
never use it (so "time", "stage" or "project" are no evidence). Grounding then re-credits
misplaced credit: when the judge credited an item the answer never states, and gave nothing to a
gold item the answer does state and the judge itself listed among its claims, that credit moves
there (the removed amount, at most what the answer supports; one removed credit per item).

Version 7 (issue 56, from the epbench20-local bundle) closes two ways credit still came free. A
place's short form must be a name of its own (grounding._own_name: an invented "<another place>
Cultural Center" had passed for "<gold> Cultural Center" on the word "cultural"). And an activity
word counts only in a sentence that is about an event of that type (`activity_in_sentences`): one
that names no other event type, holds fewer activity words of any other type, and names none of
the book's people but those of a chapter of that type ("Ben, a developer, hosted an astronomy
quiz" had kept a Tech Hackathon credit on "developer"). Measured on the bundle: 9 credits of 2,400
judged questions lose their credit, none gains; the label set's accuracy is unchanged (0.991).
NLTK's Snowball stemmer was tried for the activity words and left out: merging inflections
dropped right paraphrases ("a dramatic scene" for Theater Performance) and credited new wrong ones
("observe the music" for Astronomy Night).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from difflib import SequenceMatcher

from ..answer_text import sentences, tokens
from .behaviour import EpBenchGrounding
from .grounding import (
    FULL,
    PARTIAL,
    Grounded,
    assertive_text,
    asserts_something,
    content_tokens,
    coverage,
    gold_support,
    item_supported,
    mask,
    phrase_in,
    stem,
)
from .names import unknown_people
from .universe import Universe

GROUNDING_VERSIONS = (1, 2)  # the item grounding itself (custom datasets share it)
# EpBench's: 3 = version 2's grounding, with the matcher's count of claims as precision's floor (matcher.checks);
# 4 = 3, and a 0-cue answer that asserts something counts at least one claim;
# 5 = 4, and naming a person, place, date or event type of the book the question did not name asserts something;
# 6 = 5, and any text left outside the declines asserts something (an echo of the question's cue, a chunk tag);
# 7 = 6, and a place's short form must be a name of its own; an activity word counts only in a sentence that gives
#     no evidence of an event type outside the gold list and names none but people of an event of that type
EPBENCH_GROUNDING_VERSIONS = (1, 2, 3, 4, 5, 6, 7)
MIN_USES, MIN_SHARE, DETAIL_COVERAGE = 2, 0.6, 0.67
_VOCAB: dict[int, tuple[Universe, dict[str, frozenset[str]]]] = {}


_CLAUSE = re.compile(r",(?!\s*\d{4}\b)\s*|;\s*|\n+|\s+(?=but\b)|(?<=[.!?])\s+")  # "May 31, 2024" stays whole
_DENIAL = re.compile(r"\b(?:not|never|no longer|neither|nor)\b|n't\b", re.I)


def affirmed_text(answer: str) -> str:
    """The assertive text without the clauses that deny something ("not on May 31, 2024")."""
    return "\n".join(c for c in _CLAUSE.split(assertive_text(answer)) if c.strip() and not _DENIAL.search(c))


def _words(text: str) -> set[str]:
    return {stem(w) for w in content_tokens(text) if len(w) >= 4 and not w.isdigit()}


def activity_words(universe: Universe) -> dict[str, frozenset[str]]:
    """Event type -> its activity words (see the module docstring); computed once per universe."""
    hit = _VOCAB.get(id(universe))
    if hit is not None and hit[0] is universe:
        return hit[1]
    names = {w for v in universe.people | universe.locations for w in _words(v)}
    generic = {stem(w) for w in universe.generic_event_words}
    per_type: dict[str, Counter[str]] = {}
    total: Counter[str] = Counter()
    for t, details in universe.details.items():
        c = per_type.setdefault(t, Counter())
        for d in details:
            ws = _words(d)
            c.update(ws)
            total.update(ws)
    out: dict[str, frozenset[str]] = {}
    for t, c in per_type.items():
        elsewhere = set().union(*(w for o, w in universe.chapter_words.items() if o != t))
        out[t] = frozenset(w for w, n in c.items() if n >= MIN_USES and n / total[w] >= MIN_SHARE
                           and w not in names and w not in generic and w not in elsewhere)
    _VOCAB[id(universe)] = (universe, out)
    return out


def name_in(name: str, text: str) -> bool:
    """The name as whole words, each word allowed a small typo (first letter kept): version 1's
    fuzzy phrase test also matched "the performance" for "Theater Performance"."""
    want, have = tokens(name), tokens(text)
    if not want:
        return False
    for i in range(len(have) - len(want) + 1):
        window = have[i:i + len(want)]
        if all(a == b or (a[0] == b[0] and len(a) >= 5 and SequenceMatcher(None, a, b).ratio() >= 0.8)
               for a, b in zip(want, window, strict=True)):
            return True
    return False


def _named_type(t: str, text: str, universe: Universe, question: str) -> bool:
    """The text names event type `t`: its name, or a word of its name no other type uses."""
    if name_in(t, text):
        return True
    common = {stem(w) for w in universe.generic_event_words}
    own = {stem(w) for w in content_tokens(t) if len(w) >= 5} - common
    return bool(own & {stem(w) for w in mask(text, universe.event_types, t).split()} - _words(question))


def activity_in_sentences(gold: str, sentences_: Sequence[str], universe: Universe, question: str,
                          gold_list: Sequence[str]) -> bool:
    """Version 7's activity evidence: activity words of `gold` in a sentence that names no event
    type outside `gold_list` or the question (by name or own word), holds fewer activity words of
    any such type than of `gold`, and names none of the book's people but those of a chapter of
    type `gold`. Elsewhere the activity belongs to another event: "Ben, a developer, hosted an
    astronomy quiz" is no Tech Hackathon, nor three guests of a networking event who "meet at the
    venue" a Film Festival."""
    vocab = activity_words(universe)
    asked = _words(question)
    others = [t for t in universe.event_types if t not in gold_list and not name_in(t, question)]
    cast = {p for ch in universe.chapters.values() if ch.event_type == gold for p in (ch.entity, *ch.post_entities)}
    for s in sentences_:
        said = _words(s) - asked
        mine = len(said & vocab.get(gold, frozenset()))
        if not mine or any(phrase_in(p, s, fuzzy=False) for p in universe.people - cast):
            continue
        if not any(len(said & vocab.get(t, frozenset())) >= mine or _named_type(t, s, universe, question)
                   for t in others):
            return True
    return False


def event_evidence(gold: str, text: str, universe: Universe, question: str = "",
                   rules: EpBenchGrounding | int = 2, sentences_: Sequence[str] | None = None,
                   gold_list: Sequence[str] = ()) -> str | None:
    """FULL when the (assertive) text gives evidence of event type `gold`, else None; the
    question's own words are no evidence. Under `whole_names` (version 7) activity words are read
    per sentence (`sentences_`, the affirmed text's; `activity_in_sentences`)."""
    if _named_type(gold, text, universe, question):
        return FULL
    if EpBenchGrounding.of(rules).whole_names:
        if activity_in_sentences(gold, text.splitlines() if sentences_ is None else sentences_, universe,
                                 question, gold_list or (gold,)):
            return FULL
    elif (_words(text) - _words(question)) & activity_words(universe).get(gold, frozenset()):
        return FULL
    details = {ch.detail for ch in universe.chapters.values() if ch.event_type == gold and ch.detail}
    if any(_words(d) and coverage(d, text) >= DETAIL_COVERAGE and _words(d) - _words(question)
           for d in details):
        return FULL
    return None


def _chapter_support(gold: str, text: str, question: str, universe: Universe) -> str | None:
    """FULL, PARTIAL or None for one 'Full chapter N' item (see the module docstring); None also
    for a chapter the universe does not know."""
    m = re.search(r"(\d+)\s*$", gold)
    ch = universe.chapters.get(m.group(1)) if m else None
    if ch is None:
        return None
    if any(phrase_in(p, text) for p in ch.post_entities) or (
            ch.detail is not None and coverage(ch.detail, text) >= DETAIL_COVERAGE):
        return FULL
    present = {ch.entity, *ch.post_entities}
    other_place = any(phrase_in(v, text, fuzzy=False) and not phrase_in(v, ch.location, fuzzy=False)
                      for v in universe.locations if v != ch.location)
    other_person = any(phrase_in(v, text, fuzzy=False) for v in universe.people - present)
    invented = unknown_people(text, question, [], universe)
    return None if other_place or other_person or invented else PARTIAL


def support(gold: str, text: str, kind: str | None, universe: Universe, question: str = "",
            rules: EpBenchGrounding | int = 2, sentences_: Sequence[str] | None = None,
            gold_list: Sequence[str] = ()) -> str | None:
    """How the assertive text supports one gold item under grounding `rules` (version 2 and
    later): FULL, PARTIAL or None."""
    rules = EpBenchGrounding.of(rules)
    if kind == "event_type":
        return event_evidence(gold, text, universe, question, rules, sentences_, gold_list)
    if kind == "chapter":
        return _chapter_support(gold, text, question, universe)
    return gold_support(gold, text, kind, sorted(universe.values(kind)), universe.generic_event_words,
                        whole_name=rules.whole_names)


def ground_v2(answer: str, gold: Sequence[str], scores: Sequence[float], identified: Sequence[str],
              kind: str | None, universe: Universe, question: str = "",
              rules: EpBenchGrounding | int = 2) -> Grounded:
    """Keep the judge's credits the answer gives evidence for, then re-credit misplaced ones;
    `rules` (EpBench's grounding, version 2 and later) pick the evidence rules of `support`."""
    rules = EpBenchGrounding.of(rules)
    text = affirmed_text(answer)
    supported = [i for i in identified if item_supported(i, answer)]
    out = Grounded(supported, [i for i in identified if i not in supported], [float(s) for s in scores])
    if kind == "chapter" and not asserts_something(answer, question):
        out.credited_absent_gold = [g for g, s in zip(gold, scores, strict=True) if s > 0]
        out.matching_score = [0.0] * len(gold)
        return out
    said = [affirmed_text(s) for s in sentences(assertive_text(answer))] if rules.whole_names else None
    how = [support(g, text, kind, universe, question, rules, said, gold) for g in gold]
    for k, (g, s) in enumerate(zip(gold, scores, strict=True)):
        if s <= 0 or how[k] == FULL:
            continue
        if how[k] == PARTIAL:
            out.matching_score[k] = min(s, 0.5)
        else:
            out.matching_score[k] = 0.0
            out.credited_absent_gold.append(g)
    moved = [float(s) for g, s in zip(gold, scores, strict=True) if g in out.credited_absent_gold]
    for k, g in enumerate(gold):
        if not moved or kind == "chapter":
            break
        level = 1.0 if how[k] == FULL else 0.5 if how[k] == PARTIAL else 0.0
        if scores[k] <= 0 < level and any(support(g, i, kind, universe, rules=rules, gold_list=gold) in (FULL, PARTIAL)
                                          for i in supported):
            out.matching_score[k] = min(level, moved.pop(0))
            out.recredited.append(g)
    return out
