"""The output guard: what a weak or drifting model invents is dropped and counted, not stored.

Two checks on each chunk's Operator and space-time reply, against the chunk's own text (the
coreference rewrite, which is what the Operator read):
- an entity whose name does not occur in the chunk is dropped (names are compared normalised:
  the whole name as a phrase, or at least half of its content words, so "Dr. Ida Wren" passes
  where the text says "Ida Wren");
- a role, state, action or place/time value that repeats one of the prompt's example values
  while the chunk does not contain it is dropped (it was copied from the prompt).
The counts go into the chunk record, the chapter's workspace and the index summary, so a model
that copies its examples shows up in the numbers. Deterministic: re-reconciling saved replies
gives the same result.
"""

from __future__ import annotations

from collections import Counter

from ..output_guard import ChunkText, copied, norm
from .prompts import (
    EXAMPLE_ACTIONS,
    EXAMPLE_NAMES,
    EXAMPLE_PLACES,
    EXAMPLE_QUESTIONS,
    EXAMPLE_ROLES,
    EXAMPLE_STATES,
    EXAMPLE_TIMES,
)
from .schemas import OperatorOutput, SpaceTimeOutput

# Part of the index identity (GSW.params): what the guard drops changes the stored workspaces
# without any new model call, so an index built under another guard must not be reused.
GUARD_VERSION = "gsw-guard-3"  # 3: the worked example of gsw-prompts-3, and gsw-prompts-2's values

# The example values of the first prompt version (gsw-prompts-1), which came from the 20-chapter
# EpBench book. They are not in any prompt any more; the guard and `memeval audit gsw-operator`
# still recognise them so that indexes built with the old prompts can be measured.
OLD_EXAMPLES = ("workshop instructor", "venue of the festival", "date of the gala", "nervous", "crowded",
                "finished", "demonstrated cat leaps", "Bethpage Black Course", "March 23, 2024", "that evening")
# The example values of gsw-prompts-2 (invented, written into the instructions), still recognised
# for audits of indexes built with that version.
PREVIOUS_EXAMPLES = ("ferry pilot", "host of the picnic", "day of the regatta", "seasick", "sold out", "postponed",
                     "repaired the lighthouse lamp", "carried the crates ashore", "Marrowgate Ferry Landing",
                     "the harbour steps", "April 4, 2031", "the next morning", "When will the regatta be rescheduled?")
NEW_EXAMPLES = (*EXAMPLE_ROLES, *EXAMPLE_STATES, *EXAMPLE_ACTIONS, *EXAMPLE_PLACES, *EXAMPLE_TIMES,
                *EXAMPLE_QUESTIONS, *EXAMPLE_NAMES)
ALL_EXAMPLES = (*NEW_EXAMPLES, *PREVIOUS_EXAMPLES, *OLD_EXAMPLES)
__all__ = ["ChunkText", "copied", "norm", "guard_operator", "guard_links", "reply_values"]


def reply_values(op: OperatorOutput, st: SpaceTimeOutput | None = None) -> list[str]:
    """Every free-text value of a reply that an example could have been copied into."""
    out = [e.name for e in op.entities]
    for e in op.entities:
        for r in e.roles:
            out += [r.role, *r.states]
    out += [v.phrase for v in op.verb_phrases]
    out += [q.question for q in op.forward_questions]
    out += [link.value for link in (st.links if st else []) if link.value]
    return out


def guard_operator(op: OperatorOutput, text: str) -> tuple[OperatorOutput, Counter[str]]:
    """The reply without invented entities and copied example values; and what was dropped."""
    ct = ChunkText(text)
    examples = ALL_EXAMPLES
    counts: Counter[str] = Counter()
    out = op.model_copy(deep=True)
    kept = []
    for e in out.entities:
        if not ct.has_name(e.name) or copied([e.name], ct, examples):
            counts["entities_dropped"] += 1
            continue
        roles = []
        for r in e.roles:
            if copied([r.role], ct, examples):
                counts["roles_dropped"] += 1
                continue
            bad = set(copied(r.states, ct, examples))
            counts["states_dropped"] += len(bad)
            roles.append(r.model_copy(update={"states": [s for s in r.states if s not in bad]}))
        kept.append(e.model_copy(update={"roles": roles}))
    out.entities = kept
    verbs = [v for v in out.verb_phrases if not copied([v.phrase], ct, examples)]
    counts["actions_dropped"] += len(out.verb_phrases) - len(verbs)
    out.verb_phrases = verbs
    fq = [q for q in out.forward_questions if not copied([q.question], ct, examples)]
    counts["forward_questions_dropped"] += len(out.forward_questions) - len(fq)
    out.forward_questions = fq
    if any(copied(reply_values(op), ct, examples)):
        counts["replies_copying_examples"] += 1
    return out, +counts


def guard_links(st: SpaceTimeOutput, text: str) -> tuple[SpaceTimeOutput, Counter[str]]:
    """Space-time links whose value was copied from the prompt's examples become null-valued
    (the entities stay linked; the invented place or time is dropped)."""
    ct = ChunkText(text)
    examples = ALL_EXAMPLES
    counts: Counter[str] = Counter()
    links = []
    for link in st.links:
        if link.value and copied([link.value], ct, examples):
            counts["link_values_dropped"] += 1
            link = link.model_copy(update={"value": None})
        links.append(link)
    return st.model_copy(update={"links": links}), +counts
