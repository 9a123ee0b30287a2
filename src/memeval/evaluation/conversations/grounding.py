"""Grounding for the one-verdict conversation judges (LoCoMo CORRECT/WRONG, LongMemEval yes/no).

A small judge can call an answer CORRECT that never states the gold answer, or that only
repeats the question's words inside a refusal. Grounding keeps a CORRECT verdict only when the
answer text, outside the sentences that decline or deny, carries the gold answer's key content;
it never turns WRONG into CORRECT. Key content, most specific kind first:

- dates ("7 May 2023", "3June, 2022", "February, 2023"): a date in the answer in the same month
  and year (a period that holds the gold date counts, as the LoCoMo judge prompt allows);
  a relative gold ("the week before 9 June 2023") also accepts a date within 7 days of it, or a
  month that a day within 7 days of it falls in;
- numbers ("$1,200", "three", "40%"): one of the gold's numbers, digits or words; off by one is
  tolerated where the judge tolerates it (LongMemEval temporal reasoning);
- yes / no golds: the answer must not open with the opposite word;
- otherwise words: Porter-stemmed content words (the token-F1 stemmer), leaving out the
  question's own words unless that leaves none ("which came first, A or B?"); the answer needs
  one in three of them (at least one, at most four).

Version 2 (`protocol.grounding_version`, LoCoMo) adds the subject: where the question names one
of the conversation's two speakers and the answer names the other but not that one ("Gina is
opening a dance studio" for a question about Jon), the verdict is not grounded, whatever words
the answer shares with the gold; a list gold (comma-separated short parts: "Susie, Seraphim")
needs a key word of every part, so naming one of two snakes is no longer enough; words need half
the gold's key words, not a third ("Free yoga workshop" no longer passes for "Free gardening
class"); and dates compare as the days they mean, no vaguer than the gold (periods.py: "the week
before 16 June 2023" is not "the week before 9 June 2023", "winter 2023" is not "summer 2023",
"around mid-October 2023" does not state "19 October 2023", although the judge prompt accepts a
period that holds the gold date). On LoCoMo's known-wrong answers (SOURCES.md) the check alone
passes 5% of each kind under version 2; the label set's accuracy is unchanged (0.983).
Version 3 (LongMemEval, found on its first runs) reads two shapes of gold: a numbered list
("1. Billie Eilish concert ..., 2. Free outdoor concert ...") keeps its ordinals out of the
number check, so an answer that numbers other concerts 1 to 5 no longer states the gold's
numbers, and each of its items needs one of its key words in the answer (a list of jazz
festivals that names one of five gold events no longer passes on the four words it shares); a
gold that is a name with its acronym ("University of California, Los Angeles (UCLA)") is stated by
either; and an answer whose content words are all the question's own (a restatement of it, as
SEEM's 1.5B answered a preference question) asserts nothing, whatever the judge said. Version 1
("conv-grounding-v1") is kept so saved runs replay.
Version 4 (issue 56, from the LoCoMo bundle) stops vetoing two kinds of right answer: a list gold
of clauses ("sprucing up his business plan, tweaking his pitch to investors, and working on an
online platform") is stated by a key word of more than half of its parts, where a list of names
or things still needs every part ("Susie" is not "Susie, Seraphim"); and an answer whose every
word beyond the question's is a word of the gold, among them the gold's leading phrase
("creating a special experience is key" for "it's the key to making them feel welcome and
coming back"), states the gold's answer and nothing else, so it is not held to half the gold's
key words (a list gold is never read so; "together" is not "dancing together and ...").
Version 5 (issue 57, from hand labels of published systems' answers) reads words as people write
them: a hyphenated gold word is stated by its first part written alone ("work-related stress" by
"work stress"; "service-focused" is not stated by "focused on"), an answer's hyphenated word by its
parts, a
gold word glued from two ("watchingmovies", a typo of the gold) is stated by the two apart, and an
acronym of the gold ("UK") by the capitalised words it abbreviates ("United Kingdom").

Adversarial (LoCoMo category 5) and abstention (LongMemEval `_abs`) questions are correct when
the answer declines, so there a CORRECT verdict needs a decline somewhere in the answer, and a
refusal stays CORRECT. Preference questions are graded against a rubric, not an answer, so only
the refusal rule applies to them. Everything is model-free, so rescoring reproduces it.
"""

from __future__ import annotations

import calendar
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from ..answer_text import (
    EXCEPTION,
    DateMention,
    find_dates,
    is_refusal_sentence,
    sentences,
    wordset,
)
from ..answer_text import REFUSAL as _DECLINE_CORE
from .behaviour import ConversationGrounding
from .periods import agree, periods
from .text_overlap import stemmed_tokens

GROUNDING_VERSION = "conv-grounding-v1"
GROUNDING_VERSIONS = {1: GROUNDING_VERSION, 2: "conv-grounding-v2", 3: "conv-grounding-v3", 4: "conv-grounding-v4",
                      5: "conv-grounding-v5"}
F1_THRESHOLD = 0.5
CLAUSE_WORDS = 3  # version 4: a list gold whose parts all have this many words is a list of clauses
_WEEK = timedelta(days=7)

_MONTH_OF_YEAR = re.compile(r"\b([A-Za-z]{3,9}) of (\d{4})\b")
_MONTH_GLUE = re.compile(r"(\d)(?=(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)", re.I)
_RELATIVE = re.compile(r"\b(week|weekend|before|after|around|about|last|next|days?|early|late|mid)\b", re.I)
_NUMBER_WORDS = {  # "one" is handled in numbers()
    "zero": 0, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "once": 1, "twice": 2,
    "dozen": 12}
_NUM = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)")
_YES = wordset("yes yeah yep")
_NO = wordset("no nope not unlikely never neither")
_HEDGE = wordset("likely probably definitely certainly most")
_GOLD_POLARITY = re.compile(r"^\W*(?:(?:most )?likely |probably |definitely )?(yes|no|not)\b\s*(?:[.,;:!]|$)", re.I)
# Beyond the shared refusal pattern: the ways a reply points out a false premise.
_DECLINE_EXTRA = re.compile(
    r"\b(?:never (?:mentioned|mentions|said|says|states|told|talked|discussed|shared)|(?:haven't|have not|hasn't|has not) "
    r"(?:mentioned|told|said|shared|discussed)|(?:do not|don't) have (?:any|that|this|the|enough)|"
    r"there's no|no (?:record|evidence)|nothing (?:about|on|regarding|in|was|is|has)|not enough|unknown|"
    r"unclear)\b|"
    r"n't (?:mentioned|said|stated|given|known|clear|available|recorded)\b|(?:,|\bbut|\band) not\b", re.I)
# a list ordinal ("1. ", "2) ") at the start of a line or after punctuation (version 3)
_ORDINAL = re.compile(r"(?:^|(?<=[\s:;,(*]))(\d{1,2})[.)](?=\s)", re.M)
# a whole gold that is a name followed by its acronym (version 3)
_ACRONYM_GOLD = re.compile(r"^(?P<name>[^()]+?)\s*\((?P<acronym>[A-Z][A-Za-z&]{1,7})\)\s*\.?$")
_LIST_PARTS = re.compile(r"\s*[,;]\s*(?:and\s+|or\s+)?")
_NEGATION = re.compile(r"\b(?:not|no|never|cannot|unable|nobody|none|nothing)\b|n't\b", re.I)
_STOP = wordset(
    "a an the and or of in on at to for with by from as is was were be been being it its this that "
    "these those their his her they he she them him i me my mine we our you your yours who whom "
    "what when where which why how did do does done have has had will would can could should may "
    "might must shall just also very really some any all about into over than then there here so "
    "such only other another more most much many own same too s t user users prefer preferred "
    "response responses answer reply")
_STOP_STEMS = frozenset(stemmed_tokens(" ".join(_STOP)))


@dataclass(frozen=True)
class Grounding:
    """Whether the answer text supports a CORRECT verdict, and why (a short reason for humans)."""

    supported: bool
    reason: str


def _glue_fix(text: str) -> str:
    """'3June, 2022' -> '3 June, 2022'; 'March of 2023' -> 'March 2023' (the date parser's forms)."""
    return _MONTH_OF_YEAR.sub(r"\1 \2", _MONTH_GLUE.sub(r"\1 ", text))


def declines(answer: str) -> bool:
    """Whether any sentence of the answer declines, says the information is missing, or denies."""
    return bool(_DECLINE_CORE.search(answer) or _DECLINE_EXTRA.search(answer))


def asserted_text(answer: str) -> str:
    """The answer without sentences that decline, deny or point out a false premise (the shared
    refusal rule of answer_text.py, widened by the false-premise forms above)."""
    return "\n".join(s for s in sentences(answer) if not is_refusal_sentence(s)
                     and not (_DECLINE_EXTRA.search(s) and not EXCEPTION.search(s)))


def numbers(text: str, count_one: bool = True) -> set[float]:
    """Numbers written as digits ("1,200", "$50", "3.83") or as words ("three", "twice").

    "one" is also a pronoun ("the one with..."): a gold counts it only when it is a short phrase.
    """
    t = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    found = {float(m.group(1)) for m in _NUM.finditer(t)}
    words = re.findall(r"[a-z]+", t.lower())
    found |= {float(_NUMBER_WORDS[w]) for w in words if w in _NUMBER_WORDS}
    if "one" in words and count_one:
        found.add(1.0)
    return found


def _list_ordinals(text: str) -> list[re.Match[str]]:
    """The text's list ordinals where it is a numbered list (it numbers a 1 and a 2), else []."""
    marks = list(_ORDINAL.finditer(text))
    return marks if {1, 2} <= {int(m.group(1)) for m in marks} else []


def numbered_items(text: str) -> list[str]:
    """The items of a numbered list ("1. A, 2. B"), or [] where the text numbers no 1 and 2."""
    marks = _list_ordinals(text)
    if not marks:
        return []
    ends = [m.start() for m in marks[1:]] + [len(text)]
    return [text[m.end():e].strip(" ,;.\n") for m, e in zip(marks, ends, strict=True)]


def echoes(answer: str, question: str) -> bool:
    """Whether the answer only restates the question: four or more content words, every one the
    question's own, and most of the question's (picking one side of "A or B?" is an answer)."""
    words = {w for w in stemmed_tokens(answer) if w not in _STOP_STEMS}
    asked = {w for w in stemmed_tokens(question) if w not in _STOP_STEMS}
    return len(words) >= 4 and words <= asked and len(words) >= 0.8 * len(asked)


def without_ordinals(text: str) -> str:
    """The text without its list ordinals, where it is a numbered list (it numbers a 1 and a 2);
    any other text unchanged, so "I caught 12. Then..." keeps its 12."""
    return _ORDINAL.sub(" ", text) if _list_ordinals(text) else text


def acronym_parts(gold: str) -> tuple[str, str] | None:
    """(name, acronym) when the whole gold is a name and its acronym in parentheses, else None."""
    m = _ACRONYM_GOLD.match(gold.strip())
    if m is None or sum(c.isupper() for c in m.group("acronym")) < 2:
        return None
    return m.group("name").strip(), m.group("acronym")


def key_words(gold: str, question: str = "") -> list[str]:
    """The gold's stemmed content words, without the question's own words unless none are left."""
    words = list(dict.fromkeys(w for w in stemmed_tokens(gold) if w not in _STOP_STEMS and not w.isdigit()))
    asked = set(stemmed_tokens(question))
    fresh = [w for w in words if w not in asked]
    return fresh or words


def _as_date(d: DateMention) -> date:
    return date(d.year, d.month, min(d.day or 15, calendar.monthrange(d.year, d.month)[1]))  # no day: mid-month


def _date_support(gold_dates: Sequence[DateMention], answer_dates: Sequence[DateMention], relative: bool) -> bool:
    for g in gold_dates:
        for a in answer_dates:
            if (a.year, a.month) == (g.year, g.month) and (a.day is None or g.day is None or a.day == g.day):
                return True
            if relative and g.day is not None and a.day is not None \
                    and abs((_as_date(a) - _as_date(g)).days) <= 7:
                return True
            if relative and a.day is None and g.day is not None:
                near = {(x.year, x.month) for x in (_as_date(g) - _WEEK, _as_date(g) + _WEEK)}
                if (a.year, a.month) in near:
                    return True
    return False


def _polarity(text: str) -> str | None:
    """yes / no when the answer opens with one ("Likely not" is no), else None."""
    words = re.findall(r"[a-z]+", text.lower())[:3]
    if not words:
        return None
    if words[0] in _HEDGE:
        return "no" if {"not", "no"} & set(words[1:]) else "yes"
    return "yes" if words[0] in _YES else "no" if words[0] in _NO else None


def key_content(answer_text: str, gold: str, question: str = "", off_by_one: bool = False,
                explicit: bool = False, rules: ConversationGrounding | int = 1) -> Grounding:
    """Whether `answer_text` (already without refusal sentences) states the gold's key content
    under grounding `rules` (behaviour.py; the module docstring gives each version)."""
    rules = ConversationGrounding.of(rules)
    items: list[str] = []
    if rules.acronym_alias:
        alias = acronym_parts(gold)
        if alias is not None:
            tries = [key_content(answer_text, g, question, off_by_one, explicit, rules) for g in alias]
            best = next((t for t in tries if t.supported), tries[0])
            return Grounding(best.supported, f"name or acronym: {best.reason}")
    if rules.numbered_lists:
        items = numbered_items(gold)
        gold, answer_text = without_ordinals(gold), without_ordinals(answer_text)
    gold_fixed, text = _glue_fix(gold), _glue_fix(answer_text)
    if rules.dates_as_periods:
        gold_days, _ = periods(gold_fixed, rules)
        if gold_days:
            ok = agree(gold_days, periods(text, rules)[0])
            return Grounding(ok, "period " + ("agrees" if ok else "missing, or other days than the gold's"))
    gold_dates = find_dates(gold_fixed)
    if gold_dates:
        ok = _date_support(gold_dates, find_dates(text), bool(_RELATIVE.search(gold_fixed)))
        return Grounding(ok, "date " + ("found" if ok else "missing: " + ", ".join(d.key for d in gold_dates)))
    want = numbers(gold_fixed, count_one=len(gold_fixed.split()) <= 3)
    if want:
        stated = numbers(text)
        tol = 1.0 if off_by_one else 0.0
        ok = any(abs(w - h) <= tol for w in want for h in stated)
        return Grounding(ok, "number " + ("found" if ok else "missing: " + ", ".join(f"{w:g}" for w in sorted(want))))
    m = _GOLD_POLARITY.match(gold)
    if m:
        gold_pol = "yes" if m.group(1).lower() == "yes" else "no"
        ok = _polarity(text) in ((gold_pol,) if explicit else (None, gold_pol))
        return Grounding(ok, f"polarity {gold_pol} " + ("kept" if ok else "contradicted or not given"))
    words = key_words(gold, question)
    if not words:
        return Grounding(bool(text.strip()), "no key words in the gold")
    plain = set(stemmed_tokens(text))
    have = plain | (written_forms(text, gold) if rules.written_forms else set())
    heads = hyphen_heads(gold) if rules.written_forms else {}  # "work-related" is stated by "work" written alone
    hit = [w for w in words if w in have or heads.get(w) in plain]
    need = min(4, max(1, math.ceil(len(words) / (2 if rules.half_key_words else 3))))
    ok = len(hit) >= need
    if ok and items:  # version 3: a numbered list needs a key word of every item
        item_words = [p for p in (key_words(x, question) for x in items) if p]
        missing = sum(1 for p in item_words if not set(p) & have)
        if missing:
            return Grounding(False, f"numbered list: {missing} of {len(item_words)} gold items missing")
    pieces = _LIST_PARTS.split(gold) if rules.list_gold_parts else []
    parts = [p for p in (key_words(x, question) for x in pieces) if p]
    listed = len(parts) >= 2 and all(len(x.split()) <= 5 for x in pieces)
    if ok and listed:
        missing = sum(1 for p in parts if not set(p) & have)
        if missing and not (rules.clause_lists and clause_list(pieces) and 2 * missing < len(parts)):
            return Grounding(False, f"list: {missing} of {len(parts)} gold parts missing")
        if missing:
            return Grounding(True, f"list of clauses: {len(parts) - missing} of {len(parts)} gold parts")
    if not ok and rules.leading_phrase and not listed and not items:
        fresh, head = fresh_words(text, question), head_words(gold, question)
        if fresh and head and fresh <= set(stemmed_tokens(gold)) and head <= have:
            return Grounding(True, f"words {len(hit)}/{len(words)}: the gold's leading words, and nothing else")
    return Grounding(ok, f"words {len(hit)}/{len(words)} (need {need})")


_WORD = re.compile(r"[A-Za-z]+")
_ACRONYM_WORD = re.compile(r"\b[A-Z]{2,5}\b")
_LINKS = frozenset({"of", "the", "and", "for", "de"})


def hyphen_heads(gold: str) -> dict[str, str]:
    """Version 5: {a hyphenated gold word's stem: the stem of its first part} ("work-related" ->
    "work"): the part that says which (work, not family), stated by the answer as a word of its own
    (not inside another hyphenated word: "lower-middle-class" does not state "middle-class")."""
    out = {}
    for token in re.findall(r"[A-Za-z]+(?:-[A-Za-z]+)+", gold):
        joined, first = stemmed_tokens(token), stemmed_tokens(token.split("-")[0])
        if joined and first and first[0] not in _STOP_STEMS and len(first[0]) > 2:
            out[joined[0]] = first[0]
    return out


def written_forms(text: str, gold: str) -> set[str]:
    """Version 5: the stems of gold words the answer writes another way: a hyphenated word's
    parts, a gold word glued from two words the answer writes apart, an acronym of the gold
    spelled by the initials of capitalised words of the answer (linking words skipped)."""
    out = set(stemmed_tokens(text.replace("-", " ")))
    raw = [w.lower() for w in _WORD.findall(text)]
    pairs = {a + b for a, b in zip(raw, raw[1:], strict=False)}
    for g in _WORD.findall(gold):
        if g.lower() in pairs:
            out.update(stemmed_tokens(g))
    words = _WORD.findall(text)
    for acronym in _ACRONYM_WORD.findall(gold):
        for i in range(len(words)):
            initials, j = "", i
            while j < len(words) and len(initials) < len(acronym):
                if words[j].lower() in _LINKS and initials:
                    j += 1
                    continue
                if not words[j][0].isupper():
                    break
                initials += words[j][0]
                j += 1
            if initials == acronym:
                out.update(stemmed_tokens(acronym))
    return out


def clause_list(pieces: Sequence[str]) -> bool:
    """Whether a list gold's parts are clauses ("tweaking his pitch to investors"), at least three
    words each, rather than names or things ("Susie, Seraphim")."""
    return all(len(x.split()) >= CLAUSE_WORDS for x in pieces)


def head_words(gold: str, question: str = "") -> set[str]:
    """The gold's leading phrase, stemmed: its first run of content words ("key" in "it's the key
    to making them feel welcome", "dancing together" in "dancing together and supporting each
    other"), without the question's words unless that leaves none. What follows qualifies it."""
    stems = stemmed_tokens(gold)
    start = next((i for i, w in enumerate(stems) if w not in _STOP_STEMS), len(stems))
    end = next((i for i in range(start, len(stems)) if stems[i] in _STOP_STEMS), len(stems))
    head = [w for w in stems[start:end] if not w.isdigit()]
    asked = set(stemmed_tokens(question))
    return set([w for w in head if w not in asked] or head)


def fresh_words(text: str, question: str) -> set[str]:
    """The answer's stemmed content words that the question does not use: what it claims."""
    asked = set(stemmed_tokens(question))
    return {w for w in stemmed_tokens(text) if w not in _STOP_STEMS and w not in asked}


def _named(name: str, text: str) -> bool:
    return bool(re.search(rf"\b{re.escape(name)}\b", text, re.I))


def wrong_subject(answer: str, question: str, speakers: Sequence[str]) -> str | None:
    """The other speaker's name when the question names exactly one speaker and the answer names
    the other one but not the asked one; else None (no names, both, or no speakers known)."""
    firsts = [s.split()[0] for s in speakers if s.strip()]
    asked = [s for s in firsts if _named(s, question)]
    if len(asked) != 1:
        return None
    others = [s for s in firsts if s != asked[0] and _named(s, answer)]
    return others[0] if others and not _named(asked[0], answer) else None


def ground_verdict(answer: str, gold: str, question: str = "", *, abstention: bool = False,
                   rubric: bool = False, off_by_one: bool = False, speakers: Sequence[str] = (),
                   rules: ConversationGrounding | int = 1) -> Grounding:
    """Whether a CORRECT verdict on `answer` is grounded in its text under grounding `rules`
    (behaviour.py; see the module docstring); version 2 adds the subject check (with the
    conversation's `speakers`) and list golds."""
    rules = ConversationGrounding.of(rules)
    if abstention:
        ok = declines(answer)
        return Grounding(ok, "declines" if ok else "commits to an answer where declining is correct")
    # a gold that itself denies ("Not being able to find...") may be stated by a negative sentence
    asserted = asserted_text(answer)
    text = answer if _NEGATION.search(gold) and not rubric else asserted
    if not re.search(r"\w", text):
        return Grounding(False, "refusal: the answer asserts nothing")
    if rules.echo_veto and echoes(text, question):
        return Grounding(False, "echo: the answer only restates the question")
    if rubric:
        return Grounding(True, "rubric question: left to the judge")
    other = wrong_subject(asserted, question, speakers) if speakers and rules.subject_check else None
    if other is not None:
        return Grounding(False, f"subject: the answer is about {other}, not the person asked about")
    # when every sentence reads as a refusal, a yes/no gold needs an explicit yes/no
    return key_content(text, gold, question, off_by_one, explicit=not re.search(r"\w", asserted),
                       rules=rules)


# -- the judge against token F1 -------------------------------------------------------------

def auc(scores_pos: Sequence[float], scores_neg: Sequence[float]) -> float:
    """P(an answer judged CORRECT has higher F1 than one judged WRONG); ties count half."""
    if not scores_pos or not scores_neg:
        return math.nan
    wins = sum((p > n) + 0.5 * (p == n) for p in scores_pos for n in scores_neg)
    return wins / (len(scores_pos) * len(scores_neg))


def f1_agreement(pairs: Iterable[tuple[float, float]], threshold: float = F1_THRESHOLD) -> dict[str, float | int]:
    """How a binary verdict lines up with token F1, over (verdict, f1) pairs with both defined.

    agreement: share where verdict == (F1 >= threshold); auc: the verdict as a ranking of F1
    (0.5 = unrelated, 1 = every CORRECT answer overlaps the gold more than every WRONG one).
    """
    ok = [(v, f) for v, f in pairs if not (math.isnan(v) or math.isnan(f))]
    pos = [f for v, f in ok if v >= 0.5]
    neg = [f for v, f in ok if v < 0.5]
    return {
        "n": len(ok), "threshold": threshold,
        "agreement": sum((v >= 0.5) == (f >= threshold) for v, f in ok) / len(ok) if ok else math.nan,
        "auc": auc(pos, neg),
        "mean_f1_correct": sum(pos) / len(pos) if pos else math.nan,
        "mean_f1_wrong": sum(neg) / len(neg) if neg else math.nan,
    }


# -- which credit is the headline -----------------------------------------------------------
CREDITS = ("raw", "grounded")


def headline_credit(judge_server: object | None) -> str:
    """Grounded credit for a judge the framework serves itself (llama.cpp: a small local model),
    the papers' raw credit for any other (an API judge such as GPT-4o)."""
    return "grounded" if judge_server else "raw"


def check_credit(credit: str) -> str:
    if credit not in CREDITS:
        raise ValueError(f"protocol.credit must be one of {CREDITS}, not {credit!r}")
    return credit


def conversation_notes(metrics: dict[str, Any], name: str, key: str = "judge") -> list[str]:
    """Table notes: the headline credit, both verdicts side by side, and the judge against F1."""
    from ..protocol import fmt

    credit = metrics.get("credit", "raw")
    o = metrics["overall"]
    published = metrics.get("judge_prompt") == "published-verdict"
    judge = "the answers' own published verdicts" if published else "a local model"
    why = (f"grounded: CORRECT only when the answer states the gold's key content; the judge is {judge}"
           if credit == "grounded" else
           ("raw: the published verdict as its source's judge gave it" if published else "raw: the paper's judge verdict"))
    lines = [f"{name} credit: **{credit}** ({why}). Overall {name} raw {fmt(o.get(f'{key}_raw'))}, "
             f"grounded {fmt(o.get(f'{key}_grounded'))}; grounding withdrew "
             f"{metrics.get('grounding_removed', 0)} CORRECT verdict(s)."]
    jf = metrics.get("judge_f1") or {}
    if jf.get("raw", {}).get("n"):
        lines.append(f"Judge vs token F1 (n={jf['raw']['n']}): agreement with F1 >= {jf['raw']['threshold']} "
                     + "; ".join(f"{c} {fmt(m['agreement'])} (AUC {fmt(m['auc'])})" for c, m in jf.items()) + ".")
    return lines
