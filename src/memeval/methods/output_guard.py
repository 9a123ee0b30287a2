"""Text checks shared by the methods' output guards: is a value the model wrote really in the
passage it read, or was it copied from the prompt's examples?

Small models copy a prompt's example values into every reply (measured: GSW's Operator and
SEEM's frame call on the 0.5B model). A guard built on these checks drops such values and
counts them, so a drifting model shows up in the index summary instead of in the memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_STOP = {"the", "a", "an", "of", "and", "in", "on", "at", "to", "for", "mr", "mrs", "ms", "dr", "st"}


def norm(text: str) -> str:
    """Lower case, punctuation to spaces, single spaces."""
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


class ChunkText:
    """One passage's text, normalised once, for phrase and word look-ups."""

    def __init__(self, text: str):
        self.phrase = f" {norm(text)} "
        self.words = set(self.phrase.split())

    def has_phrase(self, value: str) -> bool:
        key = norm(value)
        return bool(key) and f" {key} " in self.phrase

    def has_name(self, name: str) -> bool:
        """The name as a phrase, or at least half of its content words (and at least one)."""
        if self.has_phrase(name):
            return True
        content = [w for w in norm(name).split() if w not in _STOP]
        hits = sum(1 for w in content if w in self.words)
        return bool(content) and hits >= 1 and 2 * hits >= len(content)


def copied(values: Iterable[str], text: ChunkText, examples: Iterable[str]) -> list[str]:
    """The values that equal an example value the passage itself does not contain."""
    keys = {norm(e) for e in examples}
    return [v for v in values if norm(v) in keys and not text.has_phrase(v)]


def quoting(values: Iterable[str], text: ChunkText, examples: Iterable[str]) -> list[str]:
    """For each value that holds an example name the passage does not contain, that name: the
    check for free text (descriptions, reports), where `copied` matches whole values."""
    absent = [e for e in examples if not text.has_phrase(e)]
    out: list[str] = []
    for v in values:
        body = ChunkText(v)
        hit = next((e for e in absent if body.has_phrase(e)), None)
        if hit is not None:
            out.append(hit)
    return out


# -- names that are not names ------------------------------------------------------------------
# A simple, documented heuristic (no tagger: none ships with the project), used by the methods'
# index counters for `memeval health`. It flags what cannot be an entity's name and errs towards
# missing: adjectives ("excited"), gerunds ("clapping") and imperatives ("keep going") pass, so
# the share it gives is a lower bound. Measured on the bundled indexes (GSW EpBench-20: 29 of 197
# names, e.g. "Adrenaline coursed through his veins", "He"; LoCoMo: 19 of 93).
def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


PRONOUNS = _words("""i me my mine myself you your yours yourself he him his himself she her hers herself
it its itself we us our ours ourselves they them their theirs themselves this that these those someone
somebody something everyone everybody everything anyone anybody anything nobody nothing who whom""")
PERSONAL = _words("i you he she it we they me him us them")  # a name never holds one
AUXILIARIES = _words("""is are was were am be been being has have had do does did will would can could
should shall may might must""")
PREPOSITIONS = _words("""through with in on at into onto across over under from to toward towards around
down up off out by like for about along against behind beneath between past upon within without""")
DETERMINERS = _words("a an the his her their its my our your this that these those some every each")
MAX_NAME_WORDS = 6  # the longest place names of the data have 5 ("American Museum of Natural History")
_TITLES = re.compile(r"\b(St|Mt|Mr|Mrs|Ms|Dr|Jr|Sr|Ft|Ave|No|vs)\.", re.I)
_WORD = re.compile(r"[A-Za-z0-9]+(?:['\u2019][A-Za-z]+)?")
_CONTRACTION = re.compile(r"\w(?:n['\u2019]t|['\u2019](?:m|re|ve|ll|d))\b", re.I)
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")


def _verb_form(word: str) -> bool:
    return len(word) > 4 and word.endswith(("ed", "ing"))


def name_problem(name: str) -> str | None:
    """Why `name` is not a noun phrase (None when nothing says so): a lone pronoun or function
    word ("a", "with"); sentence
    punctuation or a speaker's colon; a verb contraction ("wasn't", "I'm"); more than
    MAX_NAME_WORDS words; an auxiliary verb after the first word; a personal pronoun inside a
    longer name ("keep it up"); a subject followed by a verb form: "-ed" last after a noun
    ("His fingers twitched"), or "-ed"/"-ing" between a noun and a preposition or determiner
    ("Adrenaline coursed through his veins", "mind racing with ...")."""
    text = _TITLES.sub(r"\1", name.strip())
    words = [w.lower() for w in _WORD.findall(text)]
    if not words:
        return "no words"
    if len(words) == 1:
        if words[0] in DETERMINERS | PREPOSITIONS | {"and", "or", "but"}:
            return "function word"
        return "pronoun" if words[0] in PRONOUNS else None
    if _SENTENCE_END.search(text) or ": " in text:
        return "sentence punctuation"
    if _CONTRACTION.search(text):
        return "verb contraction"
    if len(words) > MAX_NAME_WORDS:
        return f"more than {MAX_NAME_WORDS} words"
    if any(w in AUXILIARIES for w in words[1:]):
        return "auxiliary verb"
    if any(w in PERSONAL for w in words):
        return "personal pronoun inside"
    closed = DETERMINERS | PREPOSITIONS
    if words[-1].endswith("ed") and _verb_form(words[-1]) and words[-2] not in closed | {"and", "or"} \
            and not words[-2].endswith("ly"):
        return "subject + verb"
    for i in range(1, len(words) - 1):
        if _verb_form(words[i]) and words[i - 1] not in closed and words[i + 1] in closed:
            return "subject + verb"
    return None


def name_counts(names: Iterable[str], samples: int = 5) -> tuple[int, int, list[str]]:
    """(names, names that are not noun phrases, the first few of those with their reason)."""
    names = list(names)
    bad = [(n, why) for n in names if (why := name_problem(n))]
    return len(names), len(bad), [f"{n!r} ({why})" for n, why in bad[:samples]]
