"""Judge vs matcher agreement: kappa on a hand-computed case, the metrics section and the table."""

from __future__ import annotations

import math

import pytest

from memeval.evaluation.agreement import agreement, cohen_kappa
from memeval.evaluation.epbench.matcher import checks
from memeval.evaluation.epbench.metrics import view
from memeval.evaluation.epbench.protocol import EpBenchProtocol
from memeval.evaluation.epbench.universe import Universe

U = Universe(dates=frozenset({"May 11, 2026", "October 13, 2024"}),
             locations=frozenset({"Port Jefferson", "High Line"}), source="test")


def test_kappa_hand_computed() -> None:
    judge = [1, 1, 0, 0, 1, 0.5]
    matcher = [1, 0, 0, 0, 1, 1]
    # observed 4/6; chance: judge 1:3 0:2 0.5:1, matcher 1:3 0:3 -> (9 + 6 + 0) / 36 = 15/36
    # kappa = (24/36 - 15/36) / (21/36) = 9/21
    assert cohen_kappa(judge, matcher) == pytest.approx(3 / 7)
    assert cohen_kappa([1, 0, 1], [1, 0, 1]) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa([1, 1], [1, 1]))  # chance agreement is total: undefined
    with pytest.raises(ValueError):
        cohen_kappa([1], [1, 0])


def _line(qid: str, rt: str, question: str, gold: list[str], scores: list[float],
          items: list[str], answer: str) -> dict:
    j = {"question_id": qid, "bucket": str(min(len(gold), 2)), "get": "all", "retrieval_type": rt,
         "gold": gold, "matching_score": scores, "identified_items": items}
    j.update(checks(question, rt, gold, scores, items, answer, U))
    return j


QT = "Reflect on all events involving Henry Reed. Provide a list of all dates."
QS = "Consider all events that Henry Reed has been involved in. List all the locations."
CASES = [
    # (judge credited a refusal by copying gold) -> matcher 0: disagreement that grounding fixes
    ("a", "Times", QT, ["May 11, 2026", "October 13, 2024"], [1, 1], ["May 11, 2026", "October 13, 2024"],
     "I cannot find any dates for Henry Reed."),
    # both agree
    ("b", "Times", QT, ["May 11, 2026"], [1], ["11 May 2026"], "On 11 May 2026."),
    ("c", "Spaces", QS, ["Port Jefferson"], [1], ["Port Jefferson"], "Port Jefferson."),
    # zero-cue question: judge saw no claim, matcher sees one
    ("d", "Spaces", QS, [], [], [], "The High Line."),
]


@pytest.fixture()
def lines() -> list[dict]:
    return [_line(*c) for c in CASES]


def test_agreement_per_item_question_and_type(lines: list[dict]) -> None:
    answers = {c[0]: c[-1] for c in CASES}
    raw = agreement(lines, lambda j: view(j, "raw"), answers)
    # items: a1 (1 vs 0), a2 (1 vs 0), b (1 vs 1), c (1 vs 1) -> 2/4 agree
    assert raw["n_items"] == 4 and raw["item_agreement"] == pytest.approx(0.5)
    assert raw["n_questions"] == 4 and raw["question_agreement"] == pytest.approx(0.5)
    assert raw["by_retrieval_type"]["Times"]["item_agreement"] == pytest.approx(1 / 3)
    assert raw["n_disagreements"] == 3
    first = raw["disagreements"][0]
    assert first["question_id"] == "a" and first["judge_credit"] == 1 and first["matcher_credit"] == 0
    assert first["answer_excerpt"].startswith("I cannot find")
    assert raw["disagreements"][-1]["gold_item"] is None and raw["disagreements"][-1]["matcher_claims"] == 1
    grounded = agreement(lines, lambda j: view(j, "grounded"), answers)
    assert grounded["item_agreement"] == pytest.approx(1.0)


def test_metrics_report_both_credits_and_agreement(lines: list[dict]) -> None:
    preds = [{"question_id": c[0], "answer": c[-1], "context_tokens": 1} for c in CASES]
    raw = EpBenchProtocol(resamples=50).metrics(lines, preds)
    grounded = EpBenchProtocol(resamples=50, credit="grounded").metrics(lines, preds)
    assert raw["credit"] == "raw" and grounded["credit"] == "grounded"
    assert raw["overall"]["f1"] == pytest.approx((1 + 1 + 1 + 1) / 4)  # the judge credited the refusal
    assert grounded["overall"]["f1"] == pytest.approx((0 + 1 + 1 + 1) / 4)
    assert raw["by_credit"]["grounded"]["f1"] == grounded["overall"]["f1"]
    assert raw["by_credit"]["deterministic"]["f1"] == pytest.approx((0 + 1 + 1 + 0) / 4)
    assert raw["grounding"]["credited_absent_gold"] == 2 and raw["grounding"]["unsupported_items"] == 2
    assert raw["agreement"]["credit"] == "raw" and raw["agreement"]["n_disagreements"] == 3
    assert raw["agreement"]["other_credit"]["grounded"]["item_agreement"] == pytest.approx(1.0)
    table = EpBenchProtocol(resamples=50).table(raw, {"method": "m"})
    assert "judge (raw) vs matcher" in table and "0.50 / κ" in table and "credit: **raw**" in table
    assert "lenient, raw credit" in table
    assert "credit: **grounded**" in EpBenchProtocol(credit="grounded").table(grounded, {"method": "m"})


def test_the_judges_agreement_is_its_raw_verdicts_whatever_the_headline_credit(lines: list[dict]) -> None:
    """Grounded credit agrees with the matcher it reads (1.00 here); the judge credited a refusal
    (0.50): the table's judge column and the report's agreement cells show the judge."""
    from memeval.evaluation.agreement import judge_block
    from memeval.evaluation.epbench.table import PRESENTATION
    from memeval.evaluation.report.tables import path_cell

    preds = [{"question_id": c[0], "answer": c[-1], "context_tokens": 1} for c in CASES]
    (column,) = [c for t in PRESENTATION.tables for c in t.columns if c.cell == "agreement"]
    for credit in ("raw", "grounded"):
        m = EpBenchProtocol(resamples=20, credit=credit).metrics(lines, preds)
        judge = judge_block(m["agreement"])
        assert judge is not None and judge["item_agreement"] == pytest.approx(0.5), credit
        assert path_cell(column, m).startswith("0.50 (κ"), credit
    assert m["agreement"]["item_agreement"] == pytest.approx(1.0)  # the grounded credit's, kept beside
    table = EpBenchProtocol(credit="grounded").table(m, {"method": "m"})
    row = next(x for x in table.splitlines() if x.startswith("| m |"))
    assert row.split(" | ")[2].startswith("0.50 / κ")  # the judge's column is not the grounded credit's 1.00
    assert "The grounded credit vs the matcher (not a check of the judge" in table and "1.00 / κ" in table


def test_judge_block_reads_the_raw_credit_of_a_grounded_block() -> None:
    from memeval.evaluation.agreement import judge_block
    from memeval.evaluation.bundle.manifest import judge_agreement

    raw = {"kappa": 0.1, "n_items": 9, "item_agreement": 0.3, "n_questions": 8, "question_agreement": 0.25}
    old = {"credit": "grounded", "kappa": 0.9, "n_items": 9, "item_agreement": 0.99, "n_questions": 8,
           "question_agreement": 0.9, "other_credit": {"raw": raw}}
    assert judge_block(old) is raw and judge_block({**raw, "credit": "raw"})["kappa"] == 0.1
    assert judge_block({"credit": "grounded", "kappa": 0.9}) is None and judge_block(None) is None
    assert judge_agreement({"agreement": old}).startswith("judge (raw) vs deterministic matcher: 30% of 9")


def test_old_judgments_are_completed_from_predictions() -> None:
    """Lines judged before grounding existed get it at rescore time, from the stored answers."""
    old = [{"question_id": "a", "bucket": "2", "get": "all", "retrieval_type": "Times",
            "gold": ["May 11, 2026"], "matching_score": [1], "identified_items": ["May 11, 2026"]}]
    preds = [{"question_id": "a", "question": QT, "answer": "I cannot find it.", "context_tokens": 1}]
    m = EpBenchProtocol(resamples=20, credit="grounded").metrics(old, preds)
    assert m["grounding"]["n_backfilled_from_predictions"] == 1 and m["overall"]["f1"] == 0.0
    assert "deterministic" not in old[0]  # the caller's lines are not modified
    bare = EpBenchProtocol(resamples=20, credit="grounded").metrics(old, [])
    assert bare["credit"] == "raw" and bare["overall"]["f1"] == 1.0  # nothing to ground: says raw
