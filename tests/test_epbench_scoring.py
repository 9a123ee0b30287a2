"""The EpBench scoring rules on hand-computed cases (PROTOCOLS.md)."""

from __future__ import annotations

import math

import pytest

from memeval.datasets.epbench import bucket_of
from memeval.evaluation.epbench.protocol import EpBenchProtocol
from memeval.evaluation.epbench.scoring import dedupe_gold, score_question


def test_zero_cue_question_scores_one_only_when_nothing_claimed() -> None:
    assert score_question(0, [], 0).f1 == 1.0
    hallucinated = score_question(0, [], 2)
    assert hallucinated.f1 == 0.0 and hallucinated.recall is None and hallucinated.precision == 0.0


def test_nothing_claimed_when_items_existed_is_zero() -> None:
    s = score_question(2, [0, 0], 0)
    assert s.f1 == 0.0 and s.precision is None and s.recall == 0.0


def test_lenient_caps_claims_at_gold_count_harsh_does_not() -> None:
    # 2 gold items, both found, 4 items claimed
    lenient = score_question(2, [1, 1], 4, "lenient")
    harsh = score_question(2, [1, 1], 4, "harsh")
    assert lenient.precision == 1.0 and lenient.f1 == 1.0
    assert harsh.precision == 0.5 and harsh.recall == 1.0
    assert harsh.f1 == pytest.approx(2 * 0.5 * 1 / 1.5)


def test_half_scores() -> None:
    s = score_question(2, [1, 0.5], 2)
    assert s.precision == 0.75 and s.recall == 0.75 and s.f1 == pytest.approx(0.75)
    s = score_question(4, [0.5, 0, 0, 0], 1)
    assert s.precision == 0.5 and s.recall == 0.125 and s.f1 == pytest.approx(0.2)


def test_duplicate_gold_items_dropped_with_their_scores() -> None:
    gold, scores = dedupe_gold(["A", "B", "A", "C"], [1, 0, 0.5, 1])
    assert gold == ["A", "B", "C"] and scores == [1, 0, 1]
    with pytest.raises(ValueError):
        dedupe_gold(["A"], [1, 0])


def test_buckets_cut_on_matching_chapters() -> None:
    assert [bucket_of(n) for n in (0, 1, 2, 3, 5, 6, 17)] == ["0", "1", "2", "3-5", "3-5", "6+", "6+"]


def _j(qid: str, bucket: str, gold: list[str], scores: list[float], n_items: int, get: str = "all") -> dict:
    return {"question_id": qid, "bucket": bucket, "get": get, "retrieval_type": "Times", "gold": gold,
            "matching_score": scores, "identified_items": [f"x{i}" for i in range(n_items)]}


def test_metrics_overall_buckets_and_simple_recall() -> None:
    rows = [
        _j("a", "0", [], [], 0),                 # F1 1
        _j("b", "1", ["X"], [1], 1),             # F1 1
        _j("c", "1", ["Y"], [0], 1),             # F1 0
        _j("d", "2", ["X", "Y"], [1, 0.5], 3),   # lenient: P = 1.5/2, R = 0.75 -> F1 0.75
        _j("e", "2", ["X", "Y"], [1, 1], 2, get="latest"),  # F1 1, excluded from simple recall
    ]
    m = EpBenchProtocol(resamples=200).metrics(rows, [])
    assert m["overall"]["n"] == 5
    assert m["overall"]["f1"] == pytest.approx((1 + 1 + 0 + 0.75 + 1) / 5)
    assert m["buckets"]["1"]["f1"] == pytest.approx(0.5)
    assert m["buckets"]["2"]["f1"] == pytest.approx((0.75 + 1) / 2)
    # simple recall: get == all only; bucket means 1, 0.5, 0.75 -> mean 0.75
    assert m["simple_recall"] == pytest.approx(0.75)
    # precision undefined on the 0-cue question: averaged over the other four
    assert m["overall"]["precision"] == pytest.approx((1 + 0 + 0.75 + 1) / 4)
    assert m["policy"] == "lenient" and m["overall"]["f1_std"] > 0
    harsh = EpBenchProtocol(policy="harsh", resamples=200).metrics(rows, [])
    assert harsh["buckets"]["2"]["precision"] == pytest.approx((0.5 + 1) / 2)


def test_judge_failures_are_excluded_not_zero() -> None:
    rows = [_j("a", "1", ["X"], [1], 1), {"question_id": "b", "bucket": "1", "get": "all",
                                            "retrieval_type": "Times", "judge_error": "bad json"}]
    m = EpBenchProtocol(resamples=50).metrics(rows, [])
    assert m["overall"]["n"] == 1 and m["overall"]["f1"] == 1.0
    assert m["n_judge_failed"] == 1 and m["judge_failed_ids"] == ["b"]


def test_bootstrap_is_seeded() -> None:
    rows = [_j(str(i), "1", ["X"], [i % 2], 1) for i in range(30)]
    a = EpBenchProtocol(resamples=300, seed=3).metrics(rows, [])
    b = EpBenchProtocol(resamples=300, seed=3).metrics(rows, [])
    assert a["overall"]["f1_std"] == b["overall"]["f1_std"]
    assert not math.isnan(a["overall"]["f1_std"])


def test_over_crediting_judge_is_flagged_not_hidden() -> None:
    rows = [_j("a", "2", ["X", "Y"], [1, 1], 1), _j("b", "1", ["X"], [1], 1)]
    m = EpBenchProtocol(resamples=20).metrics(rows, [])
    assert m["over_credited_ids"] == ["a"]
    assert m["buckets"]["2"]["precision"] == 2.0  # the official formula, unclipped
