"""The speaker check: a stored claim about one speaker of a conversation that the other said.

A conversation's units are turns written "Name: text" (LoCoMo's "Gina: ...", LongMemEval's
"user: ..."). A claim's subject is the speaker (or "A and B") it opens with. Its best-supporting
turn is the turn, among its source units (all units where none are recorded), that shares most
of its content words (support_text.content, the speakers' own names left out). The claim is a
swap when that turn was said by a speaker who is not its subject and no turn of a subject shares
as much; with both speakers as subject (a merged "Jon and Gina started ..."), when one of them
says nothing of it in the first person ("we" counts for both): in a dialogue the other speaker echoes the topic ("your
store looks great"), so only sentences with "I", "my", "we" or "our" count as a speaker's own, and a
subject whose own sentences share under half of the best own sentence's words is merged in. Claims sharing fewer than `min_overlap` words with
every turn are not judged: nothing in the source says who.
"""

from __future__ import annotations

import re
from typing import Any

from ..runs.health_file import Check
from .grading import check, not_measured, pct, share
from .stored import Claim
from .support_text import content

NAME = "speaker_swaps"
_TURN = re.compile(r"^([A-Za-z][A-Za-z .'-]{0,30}):\s+(.+)$", re.M)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|mine|me|myself)\b", re.I)
_WE = re.compile(r"\b(?:we|we're|we've|our|ours|us)\b", re.I)  # said of both speakers
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
# A merged claim whose verb is the conversation itself ("Jon and Gina discuss ...") is both's by definition.
_DIALOGUE_VERB = re.compile(r"^(?:\w+\s+and\s+\w+)\s+(?:discuss|talk|chat|convers|exchang|greet|catch(?:es|ed)?\s+up)", re.I)


class Turns:
    """A conversation corpus's turns: (unit id, speaker, content keys) per turn."""

    def __init__(self, corpus: Any):
        self.turns: list[tuple[str, str, frozenset[str]]] = []
        self.own: list[tuple[str, str, frozenset[str]]] = []  # first-person sentences: what a speaker says of self
        for u in corpus.units:
            for m in _TURN.finditer(u.text or ""):
                speaker = m.group(1).strip().lower()
                self.turns.append((str(u.id), speaker, frozenset(content(m.group(2)).words)))
                for sentence in _SENTENCE.findall(m.group(2)):
                    if _WE.search(sentence):
                        self.own.append((str(u.id), "", frozenset(content(sentence).words)))
                    elif _FIRST_PERSON.search(sentence):
                        self.own.append((str(u.id), speaker, frozenset(content(sentence).words)))
        counts: dict[str, int] = {}
        for _, s, _ in self.turns:
            counts[s] = counts.get(s, 0) + 1
        self.speakers = {s for s, n in counts.items() if n >= 2}
        self.name_keys = {k for s in self.speakers for k in content(s).words}

    def subject(self, text: str) -> set[str]:
        """The speakers the claim opens with ("Gina", "Jon and Gina"); empty when it opens otherwise."""
        words = re.findall(r"[A-Za-z]+", text)
        out: set[str] = set()
        for w in words:
            if w.lower() in self.speakers:
                out.add(w.lower())
            elif w.lower() not in ("and", "&") or not out:
                break
        return out

    def best(self, keys: frozenset[str], units: tuple[str, ...] | None, own: bool = False) -> dict[str, int]:
        """Per speaker, the most content keys one of their turns (own: first-person sentences) shares."""
        out: dict[str, int] = {}
        allowed = set(units or ())
        for unit, speaker, turn in self.own if own else self.turns:
            if allowed and unit not in allowed:
                continue
            n = len(keys & turn)
            for who in (self.speakers if own and not speaker else (speaker,)):  # "" = we: both
                if n > out.get(who, 0):
                    out[who] = n
        return out


def swap(claim: Claim, turns: Turns, min_overlap: int) -> tuple[bool, str | None]:
    """(judged: a subject speaker and a turn sharing enough, why the claim is a swap or None)."""
    subject = turns.subject(claim.text)
    if not subject or len(turns.speakers) < 2:
        return False, None
    keys = frozenset(content(claim.text).words) - turns.name_keys
    if claim.units and not any(u for u, _, _ in turns.turns if u in claim.units):
        units = None
    else:
        units = claim.units
    best = turns.best(keys, units)
    top = max(best.values(), default=0)
    if top < min_overlap:
        return False, None
    said = {s for s, n in best.items() if n == top}
    own = turns.best(keys, units, own=True)
    top_own = max(own.values(), default=0)
    if not said & subject:
        # the other speaker's turn matches best; a swap only when the subject never says it of self
        # (an echo "your studio is open" is the other's turn about the subject's life)
        if top_own >= min_overlap and all(2 * own.get(s, 0) < top_own for s in subject):
            return True, f"about {'/'.join(sorted(subject))}, said by {'/'.join(sorted(said))} of self"
        return True, None
    if len(subject) > 1 and not _DIALOGUE_VERB.match(claim.text.strip()):
        weak = [s for s in subject if 2 * own.get(s, 0) < top_own]
        if top_own >= min_overlap and weak:
            owner = sorted(s for s, n in own.items() if n == top_own)
            return True, f"merges {'/'.join(sorted(subject))}: only {'/'.join(owner)} says it of self"
    return True, None


def speaker_swaps_check(claims: dict[str, list[Claim] | None] | None, dataset: Any, th: dict[str, Any]) -> Check:
    """Share of a conversation index's speaker-led claims whose best turn is the other speaker's."""
    if claims is None:
        return not_measured(NAME, "index", th, "nothing extracted: the index is the text itself")
    if dataset is None:
        return not_measured(NAME, "index", th, "the run's benchmark data is not on this machine")
    judged = bad = 0
    examples: list[str] = []
    for cid, items in claims.items():
        if not items or cid not in dataset.corpora:
            continue
        turns = Turns(dataset.corpora[cid])
        if len(turns.speakers) != 2:
            continue  # not a two-speaker conversation (a book's chapters have no turns)
        for claim in items:
            seen, why = swap(claim, turns, int(th.get("min_overlap", 2)))
            judged += seen
            if why:
                bad += 1
                if len(examples) < 3:
                    examples.append(f"{claim.where}: {claim.text[:100]!r} ({why})")
    if not judged:
        return not_measured(NAME, "index", th, "no stored claim led by a speaker of a two-speaker conversation")
    what = f"{pct(bad, judged)} speaker-led stored claims are best supported by the other speaker's turn"
    if examples:
        what += "; e.g. " + "; ".join(examples)
    return check(NAME, "index", share(bad, judged), th, what)
