"""Kind checks on one chunk's Operator and space-time reply (`validate_kinds`), after guard.py.

The guard drops what the chunk does not say; these checks drop what is said but is not of its
kind. On the shipped EpBench-20 index (0.5B model) entity names included sentences ("Adrenaline
coursed through his veins") and pronouns ("She"), places included people and objects, and times
included "rugged terrain" (`memeval audit gsw-entities` counts them):
- an entity whose name is not a noun phrase (methods.output_guard.name_problem) is renamed to the
  proper name it opens with when the chunk has it ("Queensboro Bridge suddenly feeling ..." ->
  "Queensboro Bridge"), else dropped;
- a role that is a pronoun or names a person is dropped (its states with it);
- a place that is a date becomes a time; a place that names a person (a speaker, or an entity
  some who/whom question of the chapter answers with, unless its last word is a place's, such as
  "Hall" or "Park") or is not a noun phrase loses its value;
- a time that neither parses as a date (python-dateutil) nor holds a time word nor opens with a
  temporal preposition loses its value;
- in a conversation chunk (frame.py), a first-person role or state given to one speaker that
  only the other speaker said moves to the speaker who said it; the frame's speaker marks
  copied into a role or state are removed first (a copied mark may name the wrong speaker).
A link that loses its value stays as a null-valued link: the entities are still together. A link
that repeats an earlier one of the same reply exactly (kind, value, entities) is removed before
the checks (the 0.5B model's JSON space-time replies repeat lines, "time crickets = e1" seven
times): it says nothing new, and counted per line it would weigh one bad value seven times. Each
drop, repair and move is counted into the chunk's guard record (`kind_*`, `speaker_*`).
"""

from __future__ import annotations

import re
from collections import Counter

from dateutil import parser as date_parser

from ..output_guard import ChunkText, name_problem, norm
from .frame import said_by_other, strip_speaker_marks
from .schemas import OpEntity, OperatorOutput, OpRole, SpaceTimeOutput, STLink

# 2: speaker marks copied into roles and states removed before attribution;
# 3: exact repeats of a space-time link removed before the checks (the counters count distinct links)
KINDS_VERSION = 3


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_CALENDAR = _words("""january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday""")
TIME_WORDS = frozenset(_CALENDAR + _words("""jan feb mar apr jun jul aug sep sept oct nov dec today yesterday
tomorrow tonight now morning mornings afternoon afternoons evening evenings night nights noon midnight dawn
dusk sunrise sunset midday daybreak nightfall day days week weeks weekend weekends month months year years
decade decades century hour hours minute minutes season spring summer autumn fall winter ago later earlier
recently lately soon daily weekly monthly yearly annually am pm christmas easter thanksgiving halloween
birthday anniversary holiday holidays vacation"""))
# The head words of place names: a value ending in one is a place even when a reply also gave it
# as the answer to a who-question (the 0.5B model answered "who" with "Snug Harbor Cultural Center").
PLACE_HEADS = frozenset(_words("""hall halls center centre park bridge building cathedral church chapel museum
street avenue road lane square station stage room house home cottage pier island beach lake river garden
gardens gallery theater theatre stadium course library school university college office studio store shop
cafe restaurant bar pub hotel market mall plaza lot line tower harbor harbour port shore coast city town
village field arena club gym kitchen floor yard dock terminal airport court apartment flat venue pavilion"""))
_DIGIT = re.compile(r"\d")
_NAMEWORD = re.compile(r"[A-Z][\w'\u2019.-]*")
_CONNECTORS = {"of", "the", "de", "la", "van", "von", "and", "on", "at"}
BAD_ROLE = {"pronoun", "function word", "no words"}


# A phrase opening with one of these is a time relative to an event ("during the intermission",
# "since we last spoke", "when the lights came up").
TEMPORAL_OPENERS = frozenset(_words("since until till during after before when while throughout"))


def is_time(value: str) -> bool:
    """A date or time python-dateutil reads (with a digit or a month or weekday name, so "sun" or
    "may" alone are not dates), a phrase with a time word ("later that day", "this month"), or
    one that opens with a temporal preposition or conjunction ("since we last spoke")."""
    words = [w for w in norm(value).split() if w != "may" or "May" in value]  # the month, not the verb
    if any(w in TIME_WORDS for w in words) or (len(words) > 1 and words[0] in TEMPORAL_OPENERS):
        return True
    if not _DIGIT.search(value) and not any(w in _CALENDAR for w in words):
        return False
    try:
        date_parser.parse(value, fuzzy=False)
    except (ValueError, OverflowError):
        return False
    return True


def _is_date(value: str) -> bool:
    """A place value that is really a date: a time with no place word ("Central Park at noon" is a place)."""
    words = norm(value).split()
    return is_time(value) and all(w in TIME_WORDS or w.isdigit() or w in {"on", "of", "the", "at", "in"}
                                  for w in words)


def _head(value: str) -> str:
    words = norm(value).split()
    return words[-1] if words else ""


def proper_head(name: str, text: ChunkText) -> str | None:
    """The proper name a clause-like name opens with, when it is 2+ capitalised words the chunk
    contains ("Queensboro Bridge suddenly feeling less like ..." -> "Queensboro Bridge")."""
    words, out = name.split(), []
    for w in words:
        if _NAMEWORD.fullmatch(w.rstrip(",;:")) or (out and w.lower() in _CONNECTORS):
            out.append(w.rstrip(",;:"))
            if w[-1:] in ",;:":
                break
        else:
            break
    while out and out[-1].lower() in _CONNECTORS:
        out.pop()
    head = " ".join(out)
    if len(out) < 2 or head == name.strip() or name_problem(head) or not text.has_phrase(head):
        return None
    return head


def _persons(op: OperatorOutput, known: set[str], speakers: list[str]) -> set[str]:
    """Normalised names of people: the known ones, the speakers, and this reply's who/whom answers."""
    names = {e.id: norm(e.name) for e in op.entities}
    out = set(known) | {norm(s) for s in speakers}
    for v in op.verb_phrases:
        for q in v.questions:
            if q.kind in ("who", "whom"):
                out |= {names[a] for a in q.answer_entity_ids if a in names}
    return out


def _entities(op: OperatorOutput, ct: ChunkText, persons: set[str], counts: Counter[str]) -> list[OpEntity]:
    kept = []
    for e in op.entities:
        name = e.name
        if name_problem(name):
            name = proper_head(name, ct) or ""
            if not name:
                counts["kind_entities_dropped"] += 1
                continue
            counts["kind_names_repaired"] += 1
        roles = [r for r in e.roles if name_problem(r.role) not in BAD_ROLE and norm(r.role) not in persons]
        counts["kind_roles_dropped"] += len(e.roles) - len(roles)
        kept.append(e.model_copy(update={"name": name, "roles": roles}))
    return kept


def link_key(kind: str, value: str | None, entity_ids: list[str]) -> tuple[str, str | None, tuple[str, ...]]:
    """What makes two links of one reply the same link (counters.py counts distinct ones too)."""
    return kind, value, tuple(entity_ids)


def _links(st: SpaceTimeOutput, persons: set[str], counts: Counter[str]) -> list[STLink]:
    out, moved, seen = [], [], set()
    for link in st.links:
        key = link_key(link.kind, link.value, list(link.entity_ids))
        if key in seen:
            counts["kind_link_repeats_removed"] += 1
            continue
        seen.add(key)
        value = link.value
        if not value:
            out.append(link)
            continue
        if link.kind == "space" and _is_date(value):
            moved.append(link.model_copy(update={"kind": "time"}))
            counts["kind_places_to_times"] += 1
            link = link.model_copy(update={"value": None})
        elif link.kind == "space" and ((norm(value) in persons and _head(value) not in PLACE_HEADS)
                                       or name_problem(value)):
            counts["kind_places_dropped"] += 1
            link = link.model_copy(update={"value": None})
        elif link.kind == "time" and not is_time(value):
            counts["kind_times_dropped"] += 1
            link = link.model_copy(update={"value": None})
        out.append(link)
    return out + moved


def _unmarked(role: OpRole, speakers: list[str], counts: Counter[str]) -> OpRole:
    """The role and its states without the frame's speaker marks (counted `speaker_marks_removed`):
    a mark is the frame's, not the text's, and a copied one may name the wrong speaker."""
    texts = [role.role, *role.states]
    clean = [strip_speaker_marks(t, speakers) for t in texts]
    counts["speaker_marks_removed"] += sum(a != b for a, b in zip(texts, clean, strict=True))
    return role.model_copy(update={"role": clean[0], "states": clean[1:]})


def _attribute(entities: list[OpEntity], lines: list[tuple[str, str]], counts: Counter[str]) -> list[OpEntity]:
    """First-person roles and states moved to the speaker who said them (conversation chunks)."""
    by_name = {norm(e.name): e for e in entities}
    speakers = list(dict.fromkeys(s for s, _ in lines))
    gained: dict[str, list[OpRole]] = {}
    out = []
    for e in entities:
        roles = []
        for r in e.roles:
            r = _unmarked(r, speakers, counts)
            who = said_by_other(r.role, e.name, lines)
            if who:
                gained.setdefault(who, []).append(r)
                counts["speaker_roles_moved"] += 1
                continue
            stay = []
            for s in r.states:
                other = said_by_other(s, e.name, lines)
                if other:
                    gained.setdefault(other, []).append(OpRole(role=r.role, states=[s]))
                    counts["speaker_states_moved"] += 1
                else:
                    stay.append(s)
            roles.append(r.model_copy(update={"states": stay}))
        out.append(e.model_copy(update={"roles": roles}))
    for who, roles in gained.items():
        target = by_name.get(norm(who))
        if target is None:
            out.append(OpEntity(id=f"speaker{len(out) + 1}", name=who, roles=roles))
        else:
            i = next(i for i, e in enumerate(out) if e.id == target.id)
            out[i] = out[i].model_copy(update={"roles": [*out[i].roles, *roles]})
    return out


def check_kinds(op: OperatorOutput, st: SpaceTimeOutput | None, text: str, known_persons: set[str],
                lines: list[tuple[str, str]]) -> tuple[OperatorOutput, SpaceTimeOutput | None, Counter[str]]:
    """The reply with non-entities, misplaced kinds and misattributed lines dealt with; and counts.
    `lines`: the chunk's (speaker, words) when it is a framed conversation chunk, else []."""
    counts: Counter[str] = Counter()
    ct = ChunkText(text)
    persons = _persons(op, known_persons, [s for s, _ in lines])
    entities = _entities(op, ct, persons, counts)
    if lines:
        entities = _attribute(entities, lines, counts)
    out_st = st.model_copy(update={"links": _links(st, persons, counts)}) if st is not None else None
    return op.model_copy(update={"entities": entities}), out_st, +counts
