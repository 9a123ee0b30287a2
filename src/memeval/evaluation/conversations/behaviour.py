"""The conversation protocols' versions as named behaviours: the one place a version number is
compared in LoCoMo's and LongMemEval's scoring.

Each protocol builds its object once from its config (`LoCoMoBehaviour.from_versions(judge=2,
grounding=5, answer_prompt=2)`, `LongMemEvalBehaviour.from_versions(grounding=5)`); grounding,
periods and judging read its parts (`rules.subject_check`, not `version >= 2`). The grounding
table maps each version to what it adds (every version keeps the earlier ones'); the judge and
answer prompt tables to what each version does.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..versions import switches

# grounding version -> what it adds to the version before (grounding.py, periods.py)
GROUNDING_TABLE: dict[int, tuple[str, ...]] = {
    1: (),
    2: ("subject_check", "list_gold_parts", "half_key_words", "dates_as_periods"),
    3: ("acronym_alias", "numbered_lists", "echo_veto"),
    4: ("clause_lists", "leading_phrase"),
    5: ("written_forms", "day_ranges", "few_days"),
}
# LoCoMo judge version -> what judging does (locomo.py)
LOCOMO_JUDGE_TABLE: dict[int, tuple[str, ...]] = {1: (), 2: ("category_5_by_decline",)}
# LoCoMo answer prompt version -> its shape (locomo_answer.py)
ANSWER_PROMPT_TABLE: dict[int, tuple[str, ...]] = {1: (), 2: ("example_in_own_turn",)}


@dataclass(frozen=True)
class ConversationGrounding:
    """What conversation grounding version `version` does (grounding.py, periods.py)."""

    version: int
    # since 2: where the question names one speaker and the answer names the other instead, the
    # verdict is not grounded (LoCoMo reads the conversation's speakers only then)
    subject_check: bool = False
    # since 2: a list gold of short parts ("Susie, Seraphim") needs a key word of every part
    list_gold_parts: bool = False
    # since 2: words need half the gold's key words, not a third ("Free yoga workshop" for "Free
    # gardening class")
    half_key_words: bool = False
    # since 2: dates compare as the days they mean, no vaguer than the gold (periods.py)
    dates_as_periods: bool = False
    # since 3: a gold that is a name with its acronym ("... (UCLA)") is stated by either
    acronym_alias: bool = False
    # since 3: a numbered-list gold keeps its ordinals out of the number check, and each item needs
    # one of its key words (LongMemEval's first runs)
    numbered_lists: bool = False
    # since 3: an answer whose content words are all the question's own asserts nothing
    echo_veto: bool = False
    # since 4: a list gold of clauses is stated by a key word of more than half its parts
    clause_lists: bool = False
    # since 4: an answer whose every new word is the gold's, its leading phrase among them, states
    # the gold's answer and nothing else (not held to half the key words)
    leading_phrase: bool = False
    # since 5: gold words as people write them: a hyphenated word by its first part, a glued word
    # by its two parts written apart, an acronym by the capitalised words it abbreviates
    written_forms: bool = False
    # since 5: a range of days within one month ("May 21-23, 2023") is a period
    day_ranges: bool = False
    # since 5: "a few days before D" is the days 1 to 6 before D
    few_days: bool = False

    @classmethod
    def of(cls, version: int | ConversationGrounding) -> ConversationGrounding:
        """The behaviours of `version` (a ConversationGrounding is returned as is); an unknown
        version raises UnknownVersion (a ConfigError) naming the known ones."""
        if isinstance(version, ConversationGrounding):
            return version
        return cls(version, **switches(cls, GROUNDING_TABLE, version, "grounding_version"))


@dataclass(frozen=True)
class LoCoMoJudge:
    """What LoCoMo judge version `version` does."""

    version: int
    # since 2: a category-5 (adversarial) verdict is the model-free decline check, no judge call:
    # the 0.5B judge called every correct refusal WRONG under the shared prompt
    category_5_by_decline: bool = False

    @classmethod
    def of(cls, version: int | LoCoMoJudge) -> LoCoMoJudge:
        if isinstance(version, LoCoMoJudge):
            return version
        return cls(version, **switches(cls, LOCOMO_JUDGE_TABLE, version, "judge_version", cumulative=False))


@dataclass(frozen=True)
class AnswerPrompt:
    """The shape of LoCoMo answer prompt version `version` (locomo_answer.py)."""

    version: int
    # since 2: the date example is a worked exchange in turns of its own, not a value inside the
    # instructions (small models copied version 1's example as their answer)
    example_in_own_turn: bool = False

    @classmethod
    def of(cls, version: int | AnswerPrompt) -> AnswerPrompt:
        if isinstance(version, AnswerPrompt):
            return version
        return cls(version, **switches(cls, ANSWER_PROMPT_TABLE, version, "answer_prompt_version", cumulative=False))


@dataclass(frozen=True)
class LoCoMoBehaviour:
    """The LoCoMo protocol's configured versions, as named behaviours."""

    judge: LoCoMoJudge
    grounding: ConversationGrounding
    answer_prompt: AnswerPrompt

    @classmethod
    def from_versions(cls, judge: int = 2, grounding: int = 5, answer_prompt: int = 2) -> LoCoMoBehaviour:
        return cls(LoCoMoJudge.of(judge), ConversationGrounding.of(grounding), AnswerPrompt.of(answer_prompt))


@dataclass(frozen=True)
class LongMemEvalBehaviour:
    """The LongMemEval protocol's configured versions, as named behaviours."""

    grounding: ConversationGrounding

    @classmethod
    def from_versions(cls, grounding: int = 5) -> LongMemEvalBehaviour:
        return cls(ConversationGrounding.of(grounding))
