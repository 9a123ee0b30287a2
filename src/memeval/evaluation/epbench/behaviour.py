"""EpBench's protocol versions as named behaviours: the one place a version number is compared.

`EpBenchBehaviour.from_versions(judge=2, grounding=7, order_judge=2)` is built once by the
protocol from its config; judging, the matcher, grounding and metrics read its parts
(`rules.floors_claims_with_matcher`, not `grounding_version >= 3`). Each table maps a version to
the behaviours it adds (grounding: every version keeps the earlier ones') or has (judges). The
custom protocol's list answers use grounding versions 1 and 2 of the same table.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..versions import switches

# grounding version -> what it adds to the version before (evidence.py, matcher.checks)
GROUNDING_TABLE: dict[int, tuple[str, ...]] = {
    1: (),
    2: ("grounds_by_evidence",),
    3: ("floors_claims_with_matcher",),
    4: ("zero_cue_assertion_claims",),
    5: ("zero_cue_book_values_claim",),
    6: ("zero_cue_any_text_claims",),
    7: ("whole_names",),
}
# judge version -> what its judge does (judge.py)
JUDGE_TABLE: dict[int, tuple[str, ...]] = {
    1: (),
    2: ("bounded_reply",),
    3: ("bounded_reply", "reads_question_type"),
}
# order judge version -> what the order judge does (order.py)
ORDER_JUDGE_TABLE: dict[int, tuple[str, ...]] = {
    1: ("order_judge_sees_answer",),
    2: (),
}


@dataclass(frozen=True)
class EpBenchGrounding:
    """What grounding version `version` does (evidence.py, matcher.checks, metrics)."""

    version: int
    # since 2: no credit without evidence in the answer text, event contents included; a misplaced
    # credit moves to the gold item the answer supports (evidence.ground_v2, `recredited_gold`)
    grounds_by_evidence: bool = False
    # since 3: precision's claim count is never below the matcher's items of the asked kind: a local
    # judge lists the claims it credits and leaves out the wrong ones (`claims_beyond_judge`)
    floors_claims_with_matcher: bool = False
    # since 4: a 0-cue answer asserting three words beyond the question, or a year it did not name,
    # counts one claim: an invented place scored as the right "nothing to find" (`zero_cue_assertion`)
    zero_cue_assertion_claims: bool = False
    # since 5: on a 0-cue question, naming a person, place, date or event type of the book that the
    # question did not name is such a claim too (a bare wrong place)
    zero_cue_book_values_claim: bool = False
    # since 6: on a 0-cue question any word left outside the declines is a claim (an echo of the
    # question's cue, a chunk tag): the only right answer declines
    zero_cue_any_text_claims: bool = False
    # since 7: a place's short form must be a name of its own, and an event type's activity words
    # count per sentence, only where no other event is evidenced (evidence.activity_in_sentences)
    whole_names: bool = False

    @classmethod
    def of(cls, version: int | EpBenchGrounding, known: tuple[int, ...] | None = None) -> EpBenchGrounding:
        """The behaviours of `version` (an EpBenchGrounding is returned as is); `known` narrows the
        table to a protocol's own versions (custom: 1 and 2)."""
        if isinstance(version, EpBenchGrounding):
            return version
        table = GROUNDING_TABLE if known is None else {v: GROUNDING_TABLE[v] for v in known}
        return cls(version, **switches(cls, table, version, "grounding_version"))


@dataclass(frozen=True)
class EpBenchJudge:
    """What judge version `version` does (judge.py)."""

    version: int
    # since 2: every list and string of the reply bounded so the largest valid reply fits
    # max_tokens (a looping small judge is closed by the grammar), repeated items dropped
    bounded_reply: bool = False
    # 3 only: the judge reads the question's type, not its text, and lists nothing on any negative
    # statement, as the GSW and EpBench authors' judges did (a one-pass protocol)
    reads_question_type: bool = False

    @classmethod
    def of(cls, version: int | EpBenchJudge) -> EpBenchJudge:
        if isinstance(version, EpBenchJudge):
            return version
        return cls(version, **switches(cls, JUDGE_TABLE, version, "judge_version", cumulative=False))


@dataclass(frozen=True)
class OrderJudge:
    """What order judge version `version` does (order.py)."""

    version: int
    # 1 only: the order judge saw the question and the answer beside the items and reordered them
    # by its own reading; since 2 it sees only the gold list and the first judge's items, in order
    order_judge_sees_answer: bool = False

    @classmethod
    def of(cls, version: int | OrderJudge) -> OrderJudge:
        if isinstance(version, OrderJudge):
            return version
        return cls(version, **switches(cls, ORDER_JUDGE_TABLE, version, "order_judge_version", cumulative=False))


@dataclass(frozen=True)
class EpBenchBehaviour:
    """The EpBench protocol's configured versions, as the named behaviours of each part."""

    judge: EpBenchJudge
    grounding: EpBenchGrounding
    order: OrderJudge

    @classmethod
    def from_versions(cls, judge: int = 2, grounding: int = 7, order_judge: int = 2) -> EpBenchBehaviour:
        """Raises UnknownVersion (a ConfigError) naming the known versions of a setting."""
        return cls(EpBenchJudge.of(judge), EpBenchGrounding.of(grounding), OrderJudge.of(order_judge))
