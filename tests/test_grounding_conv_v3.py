"""Conversation grounding version 3 (LongMemEval's first 32k runs): a numbered-list gold's
ordinals are not its numbers, and a name's acronym states the name. Invented golds in the
shape of the two LongMemEval questions where version 1 kept a wrong answer and withdrew a right
one; LongMemEval's saved runs keep version 1."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

from memeval.evaluation.conversations.grounding import ground_verdict
from memeval.evaluation.conversations.longmemeval import LongMemEvalProtocol, grounding
from memeval.evaluation.runs.upgrade import upgrade_config, upgrade_protocol_description

ROOT = Path(__file__).resolve().parents[1]
LIST_GOLD = ("The order of the gigs I went to is: 1. a jazz trio at the Blue Room in Dunmore, "
             "2. an open-air choir in the square, 3. a folk night at the harbour pub.")
# the 1.5B's shape: five other events, numbered 1 to 5 (its real reply named five festivals)
OTHER_LIST = ("The events, earliest first:\n\n1. **Riverbend Festival** (May 2023)\n2. **Lakeside Jam** "
              "(June 2023)\n3. **Copper Hill Fair** (July 2023)\n4. **Night Market Sounds**\n5. **Dune Fest**")


def test_a_numbered_list_gold_is_not_stated_by_another_numbered_list() -> None:
    q = "In what order did I go to the gigs?"
    assert ground_verdict(OTHER_LIST, LIST_GOLD, q, rules=1).reason == "number found"  # the defect
    v3 = ground_verdict(OTHER_LIST, LIST_GOLD, q, rules=3)
    assert not v3.supported and v3.reason.startswith("words")
    right = "1. The jazz trio at the Blue Room in Dunmore, 2. the open-air choir in the square, 3. the folk night."
    assert ground_verdict(right, LIST_GOLD, q, rules=3).supported


@pytest.mark.parametrize(("answer", "gold", "ok"), [
    ("You caught 12. Then you went home.", "12", True),  # a number before a full stop is still a number
    ("You caught 1. Then 2. of them swam off.", "3", False),  # marks 1 and 2 are stripped, 3 never said
    ("Your best score is 132 points.", "132 points", True),
])
def test_numbers_outside_a_numbered_list_are_kept(answer: str, gold: str, ok: bool) -> None:
    assert ground_verdict(answer, gold, "How many?", rules=3).supported is ok


@pytest.mark.parametrize(("answer", "ok"), [
    ("You studied at NIT.", True),
    ("You studied at the Northfield Institute of Technology.", True),
    ("You studied at Eastbrook College.", False),
])
def test_a_name_or_its_acronym_states_the_gold(answer: str, ok: bool) -> None:
    gold = "Northfield Institute of Technology (NIT)"
    assert ground_verdict(answer, gold, "Where did I study?", rules=3).supported is ok
    if answer == "You studied at NIT.":
        assert not ground_verdict(answer, gold, "Where did I study?", rules=1).supported  # the defect


def test_a_parenthesised_note_is_not_an_acronym() -> None:
    # "(or 25:50)" is a second way to write the gold, not an acronym: the whole gold is read
    g = grounding("knowledge-update", "What is my best time?", "25 minutes and 50 seconds (or 25:50)",
                  "Your best time is 31 minutes.", rules=3)
    assert not g["grounded"]


def test_longmemeval_configs_carry_the_version_and_saved_runs_keep_1() -> None:
    for name in ("longmemeval_oracle", "longmemeval_s"):
        assert OmegaConf.load(ROOT / "conf" / "dataset" / f"{name}.yaml").protocol.grounding_version == 5  # current (test_grounding_conv_v5)
    target = "memeval.evaluation.conversations.longmemeval.LongMemEvalProtocol"
    old = {"run_format": 3, "dataset": {"protocol": {"_target_": target, "variant": "oracle"}}}
    assert upgrade_config(old).dataset.protocol.grounding_version == 1
    assert upgrade_protocol_description({"protocol": "longmemeval"})["grounding_version"] == 1
    assert LongMemEvalProtocol().describe()["grounding"] == "conv-grounding-v5"  # 5 since issue 57
    assert LongMemEvalProtocol.current_grounding == 5
    with pytest.raises(ValueError, match="grounding_version"):
        LongMemEvalProtocol(grounding_version=7)


def test_a_numbered_list_gold_needs_every_item() -> None:
    # SEEM's looping list named one of the gold's events among a dozen invented jazz festivals and
    # shared four of its key words, enough for the words rule alone
    q = "In what order did I go to the gigs?"
    looping = ("1. **Blue Room jazz trio** (May)\n2. **Lakeside Jazz Festival**\n3. **Harbour Jazz Festival**\n"
               "4. **Harbour Jazz Festival**\n5. **Harbour Jazz Festival**")
    assert ground_verdict(looping, LIST_GOLD, q, rules=2).supported  # what version 2 kept
    v3 = ground_verdict(looping, LIST_GOLD, q, rules=3)
    assert not v3.supported and v3.reason == "numbered list: 1 of 3 gold items missing"  # the choir


@pytest.mark.parametrize(("answer", "ok"), [
    ("I'm planning my trip next month, any suggestions for new hiking routes?", False),  # the question back
    ("You could try the ridge loop above the lake, as you said you like quiet climbs.", True),
])
def test_an_answer_that_restates_the_question_asserts_nothing(answer: str, ok: bool) -> None:
    # a preference (rubric) question is otherwise left to the judge, which credited SEEM's echo
    q = "I'm planning my trip next month, any suggestions for new hiking routes?"
    g = grounding("single-session-preference", q, "The user would prefer quiet routes with lake views.", answer, 3)
    assert g["grounded"] is ok
    assert grounding("single-session-preference", q, "x", answer, 1)["grounded"]  # version 1 left it to the judge


def test_picking_one_side_of_a_choice_is_not_an_echo() -> None:
    q = "Which did I buy first, the red kettle or the steel toaster?"
    assert ground_verdict("The red kettle was bought first.", "red kettle", q, rules=3).supported
    assert not ground_verdict("The steel toaster was bought first.", "red kettle", q, rules=3).supported


def test_a_longmemeval_run_scored_before_the_version_is_flagged_by_health() -> None:
    """Its metrics.json is of the current format but its protocol description has no grounding
    version: read as version 1, behind the current one by as many versions, with the regrade command."""
    from memeval.evaluation.health.judge import grounding_check
    from memeval.evaluation.runs.upgrade import RUN_FORMAT, upgrade_metrics

    meta = {"run_format": RUN_FORMAT}
    metrics = upgrade_metrics({"provenance": {"protocol": {"protocol": "longmemeval", "version": "1"}}}, meta)
    check = grounding_check(metrics, LongMemEvalProtocol.current_grounding, {"warn": 0})
    current = LongMemEvalProtocol.current_grounding
    assert check.status == "warn" and check.value == current - 1
    assert f"dataset.protocol.grounding_version={current}" in check.message
