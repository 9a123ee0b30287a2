"""A model-free EpBench judge: find the known values of the asked-for kind in the answer.

It exists to cross-check the LLM judge, not to replace it: it cannot see paraphrases ("a coding
marathon" for Tech Hackathon) nor invented places, but it never credits an item the answer does
not contain. For the kind of item a question asks for (Times -> dates, Spaces -> locations,
Entities and Other entities -> people, Event contents -> event types) it collects every value of
that kind the answer asserts, outside sentences that decline or deny, leaving out values the
question itself names (the cue), and scores gold items with the official P/R/F1 rules: 1 when
found, 0.5 for a partial mention (month and year only, a first or last name alone), 0 otherwise.
"Full event details" gets 1 when the account names someone else present in that chapter or its
distinctive detail.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..answer_text import find_dates, normalize, parse_date, tokens
from .behaviour import EpBenchGrounding
from .evidence import affirmed_text, ground_v2
from .grounding import (
    FULL,
    PARTIAL,
    assertive_text,
    asserts_something,
    content_tokens,
    coverage,
    gold_support,
    ground,
    phrase_in,
    words_beyond,
)
from .names import unknown_people
from .scoring import score_question
from .universe import KIND_BY_RETRIEVAL, Universe


@dataclass
class MatchResult:
    kind: str
    matching_score: list[float]
    identified_items: list[str]
    refusal: bool

    def record(self) -> dict:
        return asdict(self)

    def f1(self, policy: str = "lenient") -> float:
        return score_question(len(self.matching_score), self.matching_score,
                              len(self.identified_items), policy).f1


def _in_question(value: str, question: str) -> bool:
    return phrase_in(value, question, fuzzy=False)


def _found_values(kind: str, text: str, question: str, gold: Sequence[str], universe: Universe) -> list[str]:
    """Known values of `kind` the text names (gold with light fuzziness, others exactly)."""
    generic = universe.generic_event_words
    known = sorted(universe.values(kind) | set(gold), key=lambda v: (-len(v), v))  # set order varies by hash seed
    found: list[str] = []
    for v in known:
        if v not in gold and _in_question(v, question):
            continue
        if phrase_in(v, text, fuzzy=v in gold) or (
                kind == "event_type" and gold_support(v, text, kind, known, generic) == FULL):
            found.append(v)
    # a value inside a longer found value ("High Line" in "High Line Park") is the same mention
    return [v for v in found if not any(w != v and phrase_in(v, w, fuzzy=False) for w in found)]


def _chapter(gold: Sequence[str], text: str, universe: Universe) -> list[float]:
    scores = []
    for g in gold:
        m = re.search(r"(\d+)\s*$", g)
        ch = universe.chapters.get(m.group(1)) if m else None
        if ch is None:
            scores.append(0.0)
            continue
        named_other = any(phrase_in(p, text) for p in ch.post_entities)
        detail = ch.detail is not None and coverage(ch.detail, text) >= 0.67
        scores.append(1.0 if named_other or detail else 0.0)
    return scores


def match_answer(question: str, retrieval_type: str, gold: Sequence[str], answer: str,
                 universe: Universe) -> MatchResult | None:
    """Score one answer against its de-duplicated gold list; None for an unknown question type."""
    kind = KIND_BY_RETRIEVAL.get(retrieval_type)
    if kind is None:
        return None
    text = assertive_text(answer)
    declined = len(text.strip()) < len(answer.strip()) and not content_tokens(text)
    if kind == "chapter":
        asserts = asserts_something(answer, question)
        items = ["(account of the event)"] if asserts else []
        scores = _chapter(gold, text, universe) if asserts else [0.0] * len(gold)
        return MatchResult(kind, scores, items, not asserts)
    if kind == "date":
        return _match_dates(question, gold, text, declined)
    found = _found_values(kind, text, question, gold, universe)
    scores = [1.0 if g in found else 0.0 for g in gold]
    items = list(found)
    if kind == "person":
        known = sorted(universe.people | set(gold))
        for k, g in enumerate(gold):
            if scores[k] == 0 and gold_support(g, text, kind, known) == PARTIAL:
                scores[k] = 0.5
                items.append(g.split()[-1])
        items += unknown_people(text, question, found, universe)
    return MatchResult(kind, scores, items, declined or not items)


def _match_dates(question: str, gold: Sequence[str], text: str, declined: bool) -> MatchResult:
    cue = {d.key for d in find_dates(question)}
    gold_keys = {g: parse_date(g) for g in gold}
    wanted = {d.key for d in gold_keys.values() if d is not None}
    keys: list[str] = []
    for mention in find_dates(text):
        if (mention.key in cue and mention.key not in wanted) or mention.key in keys:
            continue
        keys.append(mention.key)
    scores = []
    for g in gold:
        d = gold_keys[g]
        if d is None:
            scores.append(1.0 if phrase_in(g, text) else 0.0)
        elif d.key in keys:
            scores.append(1.0)
        else:
            scores.append(0.5 if f"{d.year:04d}-{d.month:02d}" in keys else 0.0)
    return MatchResult("date", scores, keys, declined or not keys)


_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_NOTHING = re.compile(r"^\W*(?:nothing|none|nobody|no one|no)\b", re.I)


def zero_cue_claims(answer: str, question: str, universe: Universe | None = None, any_text: bool = False) -> bool:
    """Whether an answer to a question with nothing to find claims something anyway: three words
    beyond the question's own, or a year the question did not name ("2026" for "list all dates"),
    outside the sentences that decline and the clauses that deny ("Nothing happens on ...").
    Given the book's `universe` (version 5), naming any of its people, places, dates or event
    types that the question does not name is a claim too: a bare wrong place ("The American Museum
    of Natural History" for "which protagonists ...") is two words beyond a question that already
    says "American Museum", and version 4 scored it the right "nothing to find".
    With `any_text` (version 6), any word left is a claim: the only right answer to such a question
    declines, and versions 4-5 scored an echo of the question's own cue ("Jazz Night" for Jazz
    Night's places) or a chunk tag ("18.1" for a list of dates) as that decline."""
    text = "\n".join(c for c in affirmed_text(answer).splitlines() if not _NOTHING.match(c))
    if any_text and tokens(text):
        return True
    if len(words_beyond(text, question)) >= 3 or set(_YEAR.findall(text)) - set(_YEAR.findall(question)):
        return True
    return universe is not None and any(
        phrase_in(v, text, fuzzy=False) and not _in_question(v, question)
        for kind in ("person", "location", "date", "event_type") for v in universe.values(kind))


def checks(question: str, retrieval_type: str, gold: list[str], scores: list[float],
           identified: list[str], answer: str, universe: Universe,
           rules: EpBenchGrounding | int = 2) -> dict[str, Any]:
    """The grounded credit (under grounding `rules`, behaviour.py; a bare version number is read
    through its table) and the matcher's result for one judged answer (model-free). Version 1
    lines keep their first layout, key for key.

    Version 3: the claims that count against precision are never fewer than the items of the
    asked kind the matcher finds in the answer. A local judge lists the claims it credits and
    leaves out the wrong ones (a 0-cue answer naming three places judged as claiming nothing, so
    scored 1), which grounding alone cannot see: it checks the items listed, not the ones left out.

    Version 4: on a 0-cue question (no gold item), an answer that asserts something beyond the
    question's own words, outside sentences that decline, counts at least one claim
    (`zero_cue_claims`). The matcher knows only the book's values, so an answer that invents places ("the Ice Sculpture Park") or
    writes a date it cannot parse ("2024 March 23", or a bare "2026") found no claim under version 3,
    and a judge that listed none scored it F1 1: a hallucination scored as the right "nothing to find".

    Version 5: 4, and naming a value of the book the question did not name is such a claim too.

    Version 6: 5, and any text left outside the declines is such a claim (`zero_cue_claims`).

    Version 7: 6, and grounding's evidence is stricter (evidence.py): a place's short form must be
    a name of its own, and an event type's activity words count two in one clause."""
    rules = EpBenchGrounding.of(rules)
    kind = KIND_BY_RETRIEVAL.get(retrieval_type)
    if rules.grounds_by_evidence:
        g = ground_v2(answer, gold, scores, identified, kind, universe, question, rules)
    else:
        g = ground(answer, gold, scores, identified, kind, universe.values(kind), universe.generic_event_words,
                   question)
    det = match_answer(question, retrieval_type, gold, answer, universe)
    n_pred = g.n_pred
    beyond = 0
    if rules.floors_claims_with_matcher and det is not None:
        beyond = max(0, len(det.identified_items) - g.n_pred)
        n_pred += beyond
    unlisted = rules.zero_cue_assertion_claims and not gold and n_pred == 0 and zero_cue_claims(
        answer, question, universe if rules.zero_cue_book_values_claim else None,
        any_text=rules.zero_cue_any_text_claims)
    if unlisted:
        beyond, n_pred = beyond + 1, n_pred + 1
    out = {
        "identified_items_grounded": g.identified_items, "unsupported_items": g.unsupported_items,
        "matching_score_grounded": g.matching_score, "n_pred_grounded": n_pred,
        "credited_absent_gold": g.credited_absent_gold, "left_to_judge": g.left_to_judge,
        "deterministic": det.record() if det else None,
    }
    if rules.grounds_by_evidence:
        out["recredited_gold"] = g.recredited
    if rules.floors_claims_with_matcher:
        out["claims_beyond_judge"] = beyond
    if rules.zero_cue_assertion_claims:
        out["zero_cue_assertion"] = unlisted
    return out


_LIST_SPLIT = re.compile(r"\n+|;\s*|,\s*(?:and\s+)?|\s+and\s+|\s+or\s+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def list_parts(text: str, question: str = "") -> list[str]:
    """The parts of a list answer ("A, B and C", bullet lines): each a claimed item, unless it
    says nothing the question did not (a restated cue is no claim)."""
    asked = set(content_tokens(question))
    parts: list[str] = []
    for raw in _LIST_SPLIT.split(text):
        part = _BULLET.sub("", raw).strip(" .:*")
        if part and [t for t in content_tokens(part) if t not in asked] \
                and normalize(part) not in {normalize(p) for p in parts}:
            parts.append(part)
    return parts


def match_list(question: str, gold: Sequence[str], answer: str) -> MatchResult:
    """The model-free matcher for a list answer with no universe of known values (custom data):
    a gold item scores 1 when the answer states it (dates after parsing, names with light
    fuzziness), 0.5 for a month and year without the day; claimed items are the answer's list
    parts, never fewer than the gold items found."""
    text = assertive_text(answer)
    declined = len(text.strip()) < len(answer.strip()) and not content_tokens(text)
    how = [gold_support(g, text, None) for g in gold]
    scores = [1.0 if h == FULL else 0.5 if h == PARTIAL else 0.0 for h in how]
    found = [g for g, s in zip(gold, scores, strict=True) if s > 0]
    parts = list_parts(text, question)
    items = parts if len(parts) >= len(found) else found
    return MatchResult("items", scores, items, declined or not items)
