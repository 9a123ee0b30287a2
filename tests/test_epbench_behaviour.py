"""EpBench's behaviour table (evaluation/epbench/behaviour.py): every configured version maps to
named behaviours, grounding versions only add, an unknown version is refused naming the known
ones, the protocol builds the object once, and scoring reads the behaviours, never a version."""

from __future__ import annotations

import ast
from dataclasses import fields, replace
from pathlib import Path

import pytest

from memeval.evaluation.custom import CustomProtocol
from memeval.evaluation.epbench.behaviour import (
    GROUNDING_TABLE,
    JUDGE_TABLE,
    ORDER_JUDGE_TABLE,
    EpBenchBehaviour,
    EpBenchGrounding,
    EpBenchJudge,
    OrderJudge,
)
from memeval.evaluation.epbench.evidence import EPBENCH_GROUNDING_VERSIONS, GROUNDING_VERSIONS
from memeval.evaluation.epbench.judge import JUDGE_VERSIONS
from memeval.evaluation.epbench.matcher import checks
from memeval.evaluation.epbench.order import ORDER_JUDGE_VERSIONS
from memeval.evaluation.epbench.protocol import EpBenchProtocol
from memeval.evaluation.epbench.universe import Universe
from memeval.evaluation.versions import UnknownVersion
from memeval.model_access.errors import ConfigError

SRC = Path(__file__).resolve().parents[1] / "src" / "memeval" / "evaluation"


def _on(obj: object) -> set[str]:
    return {f.name for f in fields(obj) if f.type in ("bool", bool) and getattr(obj, f.name)}  # type: ignore[arg-type]


@pytest.mark.parametrize(("cls", "table", "configured"), [
    (EpBenchGrounding, GROUNDING_TABLE, EPBENCH_GROUNDING_VERSIONS),
    (EpBenchJudge, JUDGE_TABLE, JUDGE_VERSIONS),
    (OrderJudge, ORDER_JUDGE_TABLE, ORDER_JUDGE_VERSIONS),
])
def test_every_configured_version_has_a_behaviour_set_and_every_behaviour_a_version(cls, table, configured) -> None:
    assert tuple(sorted(table)) == tuple(configured)
    built = [cls.of(v) for v in configured]
    assert [b.version for b in built] == list(configured)
    assert len({frozenset(_on(b)) for b in built}) == len(built)  # no two versions behave alike
    flags = {f.name for f in fields(cls) if f.type in ("bool", bool)}
    assert set().union(*(_on(b) for b in built)) == flags  # no behaviour that no version switches on


def test_grounding_versions_only_add_behaviours() -> None:
    sets = [_on(EpBenchGrounding.of(v)) for v in EPBENCH_GROUNDING_VERSIONS]
    assert all(a < b for a, b in zip(sets, sets[1:], strict=False))
    assert _on(EpBenchJudge.of(3)) > _on(EpBenchJudge.of(2)) > _on(EpBenchJudge.of(1))


@pytest.mark.parametrize(("kw", "known"), [({"grounding": 8}, "[1, 2, 3, 4, 5, 6, 7]"), ({"judge": 0}, "[1, 2, 3]"),
                                           ({"order_judge": 3}, "[1, 2]")])
def test_an_unknown_version_is_refused_naming_the_known_ones(kw, known) -> None:
    with pytest.raises(UnknownVersion, match=known.replace("[", r"\[").replace("]", r"\]")) as err:
        EpBenchBehaviour.from_versions(**kw)
    assert isinstance(err.value, ConfigError) and isinstance(err.value, ValueError)
    with pytest.raises(ConfigError, match=r"known: \[1, 2\]"):
        EpBenchGrounding.of(3, known=GROUNDING_VERSIONS)  # the custom protocol's list grounding


def test_the_protocols_build_it_once_from_their_config() -> None:
    p = EpBenchProtocol(judge_version=1, grounding_version=4, order_judge_version=1)
    assert p.behaviour == EpBenchBehaviour.from_versions(judge=1, grounding=4, order_judge=1)
    assert p.judging.behaviour is p.behaviour and p.scoring.grounding is p.behaviour.grounding
    assert p.behaviour.grounding.zero_cue_assertion_claims and not p.behaviour.grounding.zero_cue_book_values_claim
    assert p.behaviour.order.order_judge_sees_answer and not p.behaviour.judge.bounded_reply
    assert CustomProtocol(grounding_version=1).behaviour == EpBenchGrounding.of(1)


def test_scoring_reads_the_behaviour_not_the_version_number() -> None:
    """A 0-cue answer naming an invented place: version 7 counts the claim; version 7's rules with
    that one behaviour switched off count none, so checks() decides by the name."""
    args = ("Where did Ana Bell go?", "Spaces", [], [], [], "She went to the Glass Orchard.", Universe())
    assert checks(*args, rules=7)["n_pred_grounded"] == 1
    off = replace(EpBenchGrounding.of(7), zero_cue_assertion_claims=False)
    line = checks(*args, rules=off)
    assert line["n_pred_grounded"] == 0 and "zero_cue_assertion" not in line


def _version_comparisons(path: Path) -> list[str]:
    """Lines comparing a version-named value by order or equality (membership, the protocols'
    setting checks `x not in VERSIONS`, is validation, not behaviour)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare) and not all(isinstance(o, ast.In | ast.NotIn) for o in node.ops) and any(
                isinstance(x, ast.Name | ast.Attribute) and (getattr(x, "id", None) or getattr(x, "attr", "")).lower()
                .endswith("version") for x in ast.walk(node)) and not any(
                isinstance(x, ast.Constant) and isinstance(x.value, str) for x in [node.left, *node.comparators]):
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_no_version_number_is_compared_outside_the_behaviour_module() -> None:
    files = [*sorted((SRC / "epbench").glob("*.py")), SRC / "custom.py"]
    assert [c for f in files if f.name != "behaviour.py" for c in _version_comparisons(f)] == []
