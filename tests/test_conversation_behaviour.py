"""The conversation protocols' behaviour table (evaluation/conversations/behaviour.py): every
configured version maps to named behaviours, grounding versions only add, an unknown version is
refused naming the known ones, LoCoMo and LongMemEval build the object once from their config,
and grounding reads the behaviours, never a version number."""

from __future__ import annotations

import ast
from dataclasses import fields, replace
from pathlib import Path

import pytest

from memeval.evaluation.conversations.behaviour import (
    ANSWER_PROMPT_TABLE,
    GROUNDING_TABLE,
    LOCOMO_JUDGE_TABLE,
    AnswerPrompt,
    ConversationGrounding,
    LoCoMoBehaviour,
    LoCoMoJudge,
    LongMemEvalBehaviour,
)
from memeval.evaluation.conversations.grounding import GROUNDING_VERSIONS, ground_verdict
from memeval.evaluation.conversations.locomo import JUDGE_PROMPTS, LoCoMoProtocol
from memeval.evaluation.conversations.locomo_answer import ANSWER_PROMPT_VERSIONS, answer_messages
from memeval.evaluation.conversations.longmemeval import LongMemEvalProtocol
from memeval.evaluation.versions import UnknownVersion
from memeval.model_access.errors import ConfigError

SRC = Path(__file__).resolve().parents[1] / "src" / "memeval" / "evaluation" / "conversations"


def _on(obj: object) -> set[str]:
    return {f.name for f in fields(obj) if f.type in ("bool", bool) and getattr(obj, f.name)}  # type: ignore[arg-type]


@pytest.mark.parametrize(("cls", "table", "configured"), [
    (ConversationGrounding, GROUNDING_TABLE, tuple(GROUNDING_VERSIONS)),
    (LoCoMoJudge, LOCOMO_JUDGE_TABLE, tuple(JUDGE_PROMPTS)),
    (AnswerPrompt, ANSWER_PROMPT_TABLE, ANSWER_PROMPT_VERSIONS),
])
def test_every_configured_version_has_a_behaviour_set_and_every_behaviour_a_version(cls, table, configured) -> None:
    assert tuple(sorted(table)) == tuple(sorted(configured))
    built = [cls.of(v) for v in configured]
    assert [b.version for b in built] == list(configured)
    assert len({frozenset(_on(b)) for b in built}) == len(built)  # no two versions behave alike
    flags = {f.name for f in fields(cls) if f.type in ("bool", bool)}
    assert set().union(*(_on(b) for b in built)) == flags  # no behaviour that no version switches on


def test_grounding_versions_only_add_behaviours() -> None:
    sets = [_on(ConversationGrounding.of(v)) for v in sorted(GROUNDING_VERSIONS)]
    assert all(a < b for a, b in zip(sets, sets[1:], strict=False))


@pytest.mark.parametrize(("kw", "known"), [({"grounding": 6}, r"\[1, 2, 3, 4, 5\]"), ({"judge": 3}, r"\[1, 2\]"),
                                           ({"answer_prompt": 0}, r"\[1, 2\]")])
def test_an_unknown_version_is_refused_naming_the_known_ones(kw, known) -> None:
    with pytest.raises(UnknownVersion, match=known) as err:
        LoCoMoBehaviour.from_versions(**kw)
    assert isinstance(err.value, ConfigError) and isinstance(err.value, ValueError)
    with pytest.raises(ConfigError, match="answer_prompt_version"):
        answer_messages(3, "CONTEXT", "When?")


def test_the_protocols_build_it_once_from_their_config() -> None:
    p = LoCoMoProtocol(judge_version=1, grounding_version=2, answer_prompt_version=1)
    assert p.behaviour == LoCoMoBehaviour.from_versions(judge=1, grounding=2, answer_prompt=1)
    assert p.behaviour.grounding.subject_check and not p.behaviour.grounding.echo_veto
    assert not p.behaviour.judge.category_5_by_decline and not p.behaviour.answer_prompt.example_in_own_turn
    assert p.describe()["category_5"] == LoCoMoProtocol(judge_version=1).describe()["category_5"] != \
        LoCoMoProtocol().describe()["category_5"]
    assert LongMemEvalProtocol(grounding_version=3).behaviour == LongMemEvalBehaviour.from_versions(grounding=3)


def test_grounding_reads_the_behaviour_not_the_version_number() -> None:
    """The subject check: on under version 2; version 1's rules with it alone switched on veto
    the answer about the other speaker too, so ground_verdict decides by the name."""
    args = ("Marco painted a lighthouse.", "a lighthouse", "What did Ines paint?")
    kw = {"speakers": ("Ines", "Marco")}
    assert ground_verdict(*args, **kw, rules=1).supported
    assert not ground_verdict(*args, **kw, rules=2).supported
    assert not ground_verdict(*args, **kw, rules=replace(ConversationGrounding.of(1), subject_check=True)).supported


def test_no_version_number_is_compared_outside_the_behaviour_module() -> None:
    found = []
    for path in sorted(SRC.glob("*.py")):
        if path.name == "behaviour.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare) and not all(isinstance(o, ast.In | ast.NotIn) for o in node.ops) and any(
                    isinstance(x, ast.Name | ast.Attribute)
                    and (getattr(x, "id", None) or getattr(x, "attr", "")).lower().endswith("version")
                    for x in ast.walk(node)):
                found.append(f"{path.name}:{node.lineno}")
    assert found == []
