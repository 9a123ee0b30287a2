"""EpBench's P/R convention (`pr_convention`: defined_only | authors) and the order judge of
version 2 (the gold list and the judge's items only), and how saved runs keep the old ones."""

from __future__ import annotations

import asyncio
import json
from dataclasses import astuple

import pytest

from memeval.evaluation.epbench.order import judge_order, order_messages_v2
from memeval.evaluation.epbench.protocol import EpBenchProtocol
from memeval.evaluation.epbench.scoring import score_question
from memeval.evaluation.runs.upgrade import RUN_FORMAT, upgrade_config, upgrade_protocol_description
from memeval.model_access.cache import ResponseCache
from memeval.model_access.chat import ChatModel

EPBENCH = "memeval.evaluation.epbench.protocol.EpBenchProtocol"


def test_the_authors_convention_scores_0_cue_and_empty_answers_as_their_judge_does() -> None:
    # nothing to find, nothing claimed: 1 / 1 / 1 (defined_only: P and R undefined, F1 1)
    assert astuple(score_question(0, [], 0, convention="authors")) == (1.0, 1.0, 1.0)
    assert astuple(score_question(0, [], 0)) == (None, None, 1.0)
    # nothing to find, items claimed: 0 / 0 / 0 (defined_only: P 0, R undefined)
    assert astuple(score_question(0, [], 2, convention="authors")) == (0.0, 0.0, 0.0)
    assert astuple(score_question(0, [], 2)) == (0.0, None, 0.0)
    # items to find, nothing claimed, a judge that credited one anyway: R = 0 (defined_only: 0.5)
    assert astuple(score_question(2, [1, 0], 0, convention="authors")) == (None, 0.0, 0.0)
    assert astuple(score_question(2, [1, 0], 0)) == (None, 0.5, 0.0)
    # a question with both: the conventions agree
    assert score_question(2, [1, 0.5], 3, convention="authors") == score_question(2, [1, 0.5], 3)
    with pytest.raises(ValueError, match="pr_convention"):
        score_question(1, [1], 1, convention="official")


def _line(qid: str, bucket: str, gold: list[str], scores: list[float], n_pred: int) -> dict:
    return {"question_id": qid, "bucket": bucket, "get": "all", "retrieval_type": "Times", "gold": gold,
            "matching_score": scores, "identified_items": [f"i{k}" for k in range(n_pred)]}


def test_overall_p_r_move_with_the_convention_and_f1_does_not() -> None:
    rows = [_line("z1", "0", [], [], 0), _line("z2", "0", [], [], 1), _line("a", "1", ["X"], [1], 1),
            _line("b", "2", ["X", "Y"], [0, 0], 0)]
    fair = EpBenchProtocol(resamples=10).metrics(rows, [])
    paper = EpBenchProtocol(resamples=10, pr_convention="authors").metrics(rows, [])
    assert fair["overall"]["f1"] == paper["overall"]["f1"] == pytest.approx(0.5)
    assert fair["overall"]["recall"] == pytest.approx(1 / 2)  # a and b only
    assert paper["overall"]["recall"] == pytest.approx(2 / 4)  # z1 1, z2 0, a 1, b 0
    assert fair["buckets"]["0"]["recall"] != fair["buckets"]["0"]["recall"]  # NaN: no 0-cue R
    assert paper["buckets"]["0"]["precision"] == paper["buckets"]["0"]["recall"] == paper["buckets"]["0"]["f1"]
    assert (fair["pr_convention"], paper["pr_convention"]) == ("defined_only", "authors")
    assert "pr_convention" not in EpBenchProtocol(resamples=10, pr_convention=None).metrics(rows, [])
    table = EpBenchProtocol(resamples=10).table(paper, {})
    assert "P/R authors" in table and "GSW authors' convention" in table
    assert "do not compare with the GSW paper's Table 2" in EpBenchProtocol(resamples=10).table(fair, {})


def test_order_judge_v2_sees_only_the_gold_list_and_the_judges_items(scripted, tmp_path) -> None:
    question, answer = "When was Oro seen, in order?", "First on June 02, 2030, then on May 01, 2030."
    messages = order_messages_v2(["May 01, 2030", "June 02, 2030"], ["June 02, 2030", "May 01, 2030"])
    sent = json.dumps(messages)
    assert question not in sent and "First on" not in sent
    judge = ChatModel("scripted-judge", base_url=scripted.base_url, api_key_env=None,
                      cache=ResponseCache(tmp_path / "c.sqlite"))
    # items in the answer's order, as the first judge listed them: the mapping follows that order
    out = asyncio.run(judge_order(judge, question, ["May 01, 2030", "June 02, 2030"], answer,
                                  ["June 02, 2030", "May 01, 2030"], rules=2))
    assert out["order_prompt"] == "epbench-order-v2" and out["order_mapping"] == [1, 0]
    # the same items listed in gold order: version 2 keeps that order (version 1 re-sorted them by the answer)
    v2 = asyncio.run(judge_order(judge, question, ["May 01, 2030", "June 02, 2030"], answer,
                                 ["May 01, 2030", "June 02, 2030"], rules=2))
    v1 = asyncio.run(judge_order(judge, question, ["May 01, 2030", "June 02, 2030"], answer,
                                 ["May 01, 2030", "June 02, 2030"], rules=1))
    assert (v2["order_mapping"], v1["order_mapping"]) == ([0, 1], [1, 0])
    assert v1["order_prompt"] == "epbench-order-v1"
    bodies = [r["body"] for r in scripted.requests if r["path"] == "/v1/chat/completions"]
    assert all(answer not in json.dumps(b["messages"]) for b in bodies[:2]) and answer in json.dumps(bodies[2])


def test_saved_configs_keep_the_old_order_judge_p_r_convention_and_locomo_prompt() -> None:
    def cfg(fmt: int | None, target: str, **protocol: object) -> dict:
        out = {"dataset": {"protocol": {"_target_": target, **protocol}}}
        return out if fmt is None else {**out, "run_format": fmt}

    for fmt in (None, 1, 2):  # formats 0-2 predate the three settings
        old = upgrade_config(cfg(fmt, EPBENCH)).dataset.protocol
        assert old.order_judge_version == 1 and old.pr_convention is None
        loc = upgrade_config(cfg(fmt, "memeval.evaluation.conversations.locomo.LoCoMoProtocol")).dataset.protocol
        assert loc.answer_prompt_version == 1
    new = upgrade_config(cfg(RUN_FORMAT, EPBENCH)).dataset.protocol
    assert "order_judge_version" not in new and "pr_convention" not in new  # the code defaults (the shipped ones)
    assert EpBenchProtocol(**{k: v for k, v in upgrade_config(cfg(None, EPBENCH)).dataset.protocol.items()
                              if k != "_target_"}).describe()["order_judge_version"] == 1
    # an old description reads as today's describe() of the upgraded protocol, key order included
    old_desc = {"protocol": "epbench", "version": "2", "credit": "raw", "judge_mode": "one_pass",
                "matcher_universe": "x", "judge_version": 2}
    want = EpBenchProtocol(judge_version=2, grounding_version=1, order_judge_version=1,
                           pr_convention=None).describe()
    assert list(upgrade_protocol_description(old_desc, 0)) == list(want)
    assert upgrade_protocol_description({**old_desc, "grounding_version": 2}, 2)["order_judge_version"] == 1
