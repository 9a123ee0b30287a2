"""Grounded verdicts for the LoCoMo and LongMemEval judges, the judge against token F1, the
conversation label sets with judge_check, and the headline credit chosen by the judge's kind."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from memeval.cli import judge_check
from memeval.datasets.locomo import NOT_MENTIONED
from memeval.datasets.types import Question
from memeval.evaluation.conversations import judge_check as cjc
from memeval.evaluation.conversations.grounding import f1_agreement, ground_verdict
from memeval.evaluation.conversations.locomo import LoCoMoProtocol
from memeval.evaluation.conversations.longmemeval import LongMemEvalProtocol
from memeval.evaluation.custom import CustomProtocol
from memeval.evaluation.epbench.protocol import EpBenchProtocol
from memeval.model_access.chat import ChatResult

ROOT = Path(__file__).resolve().parents[1]
KINDS = {"correct", "paraphrase", "wrong", "refusal", "partial", "hallucinated", "wrong-date-format"}


class YesJudge:
    """A judge that accepts everything: CORRECT / yes (what a 0.5B judge did)."""

    async def complete(self, messages, max_tokens=None, response_format=None) -> ChatResult:
        return ChatResult("Yes.", 1, 1, False, "fake")

    async def complete_json(self, messages, model, max_tokens=None):
        return model.model_validate({"reasoning": "ok", "label": "CORRECT"}), ChatResult("{}", 1, 1, False, "fake")


def _locomo_line(qid: str, text: str, gold: str, cat: int, answer: str) -> dict[str, Any]:
    attrs = {"category": cat, **({"adversarial_answer": "a trap"} if cat == 5 else {})}
    q = Question(qid, "conv-x", text, (gold,), attrs=attrs)
    # version 1 asks the judge on category 5 too (version 2 decides it by the decline check)
    return asyncio.run(LoCoMoProtocol(judge_version=1).judge(q, {"answer": answer}, None, YesJudge()))


def _lme_line(qid: str, text: str, gold: str, qtype: str, answer: str) -> dict[str, Any]:
    q = Question(qid, "h", text, (gold,), attrs={"question_type": qtype, "is_abstention": qid.endswith("_abs")})
    return asyncio.run(LongMemEvalProtocol().judge(q, {"answer": answer}, None, YesJudge()))


# -- grounding a verdict ------------------------------------------------------------------

def test_refusal_with_gold_words_copied_is_not_correct_after_grounding() -> None:
    line = _locomo_line("a", "What did Ines paint?", "a lighthouse at dusk", 4,
                        "The conversation does not mention Ines painting a lighthouse at dusk.")
    assert line["correct"] == 1 and line["correct_grounded"] == 0 and "refusal" in line["grounding"]
    lme = _lme_line("b", "Where does my cousin Tobias live?", "Lisbon", "single-session-user",
                    "You never told me where Tobias lives, Lisbon or elsewhere.")
    assert lme["correct"] == 1 and lme["correct_grounded"] == 0
    kept = _locomo_line("c", "What did Ines paint?", "a lighthouse at dusk", 4, "A lighthouse in the evening light")
    assert kept["correct_grounded"] == 1


@pytest.mark.parametrize("answer", ["2023-05-07", "May 7th, 2023", "05/07/2023", "on the 7th of May 2023",
                                    "Sunday 7 May, 2023"])
def test_a_date_in_another_format_grounds(answer: str) -> None:
    assert ground_verdict(answer, "7 May 2023", "When did Ines move?").supported


@pytest.mark.parametrize(("gold", "answer", "ok"), [
    ("The Friday before 10July, 2022.", "8 July 2022", True),       # glued day+month, relative gold
    ("The Friday before 10July, 2022.", "August 2022", False),
    ("The week before 2 June 2023", "late May 2023", True),          # a month a day of that week falls in
    ("March, 2023", "in March of 2023", True),
    ("March, 2023", "April 2023", False),
    ("7 May 2023", "7 May 2022", False),
])
def test_dates_relative_and_wrong(gold: str, answer: str, ok: bool) -> None:
    assert ground_verdict(answer, gold).supported is ok


@pytest.mark.parametrize(("gold", "answer", "kw", "ok"), [
    ("$1,200", "It cost 1200 dollars", {}, True),
    ("Three dogs.", "She has 3 dogs", {}, True),
    ("Three dogs.", "two dogs", {}, False),
    ("18 days. 19 days (including the last day) is also acceptable.", "17 days", {"off_by_one": True}, True),
    ("18 days.", "17 days", {}, False),
    ("Likely no; she prefers quiet evenings", "Probably not", {}, True),
    ("Likely no; she prefers quiet evenings", "Yes, she would", {}, False),
    ("Not being able to find quiet cafes", "They could not find quiet cafes", {}, True),  # not a "no" gold
    ("Not being able to find quiet cafes", "I don't know.", {}, False),
    ("No", "I don't know.", {}, False),  # a negative gold keeps negative sentences, yet a refusal is no "no"
])
def test_numbers_and_polarity(gold: str, answer: str, kw: dict, ok: bool) -> None:
    assert ground_verdict(answer, gold, "", **kw).supported is ok


def test_question_words_are_no_evidence_unless_nothing_else_is_left() -> None:
    q = "Which did Ines finish first, the quilt or the birdhouse?"
    assert ground_verdict("The quilt came first.", "The quilt", q).supported
    assert not ground_verdict("The birdhouse.", "The quilt", q).supported
    assert not ground_verdict("She painted a mural.", "a kayak trip", "What trip did Ines take?").supported


def test_abstention_and_adversarial_refusal_stays_correct() -> None:
    adv = _locomo_line("d", "Which band did Ines see?", NOT_MENTIONED, 5, NOT_MENTIONED)
    assert adv["correct"] == adv["correct_grounded"] == 1
    trap = _locomo_line("e", "Which band did Ines see?", NOT_MENTIONED, 5, "The Paper Kites")
    assert trap["correct"] == 1 and trap["correct_grounded"] == 0
    for answer in ("I don't know.", "You mentioned a kayak, not a canoe.", "That isn't mentioned anywhere."):
        line = _lme_line("q_abs", "When did I buy the canoe?", "Not enough information.", "temporal-reasoning", answer)
        assert line["judge_kind"] == "abstention" and line["correct_grounded"] == 1, answer
    hall = _lme_line("q_abs", "When did I buy the canoe?", "Not enough information.", "temporal-reasoning", "On 3 June.")
    assert hall["correct_grounded"] == 0


def test_preference_answers_only_lose_credit_for_refusing() -> None:
    rubric = "The user would prefer suggestions that use their love of ceramics."
    assert _lme_line("p", "Any gift ideas?", rubric, "single-session-preference", "A glazing kit.")["correct_grounded"] == 1
    assert _lme_line("p", "Any gift ideas?", rubric, "single-session-preference", "I don't know.")["correct_grounded"] == 0


# -- metrics: both verdicts, the judge against F1, the headline ----------------------------

def _lp(qid: str, cat: int, gold: str, answer: str) -> dict[str, Any]:
    return {"question_id": qid, "question": "What did Ines bring?", "gold": [gold], "category": cat,
            "answer": answer, "gold_units": ["1"], "context_chapters": ["1"], "context_tokens": 5}


PREDS = [_lp("a", 4, "a red kite", "a red kite"), _lp("b", 4, "a red kite", "The conversation does not mention a red kite."),
         _lp("c", 4, "a red kite", "a blue umbrella"), _lp("d", 4, "a red kite", "kite")]
JUDG = [{"question_id": q, "category": 4, "judge_prompt": "locomo-judge-v1", "correct": c}  # judged before grounding
        for q, c in (("a", 1), ("b", 1), ("c", 0), ("d", 0))]


def test_locomo_metrics_report_raw_and_grounded_and_the_headline_follows_credit() -> None:
    raw = LoCoMoProtocol(resamples=20).metrics(JUDG, PREDS)
    grounded = LoCoMoProtocol(resamples=20, credit="grounded").metrics(JUDG, PREDS)
    assert raw["overall"]["judge_raw"] == grounded["overall"]["judge_raw"] == pytest.approx(0.5)
    assert raw["overall"]["judge_grounded"] == pytest.approx(0.25)   # the refusal "b" lost its credit
    assert raw["overall"]["judge"] == pytest.approx(0.5) and grounded["overall"]["judge"] == pytest.approx(0.25)
    assert raw["grounding_removed"] == 1 and grounded["credit"] == "grounded"
    # token F1: a 1.0, b ~0.67 (the refusal copies the gold), c 0, d 0.67 (kite vs "red kite")
    assert raw["judge_f1"]["raw"]["n"] == 4
    assert raw["judge_f1"]["grounded"]["auc"] > raw["judge_f1"]["raw"]["auc"]
    table = LoCoMoProtocol().table(grounded, {"method": "m"})
    assert "| J (grounded credit) ± std |" in table and "J credit: **grounded**" in table
    assert "Judge vs token F1" in table and "raw 0.500, grounded 0.250" in table
    qs = LoCoMoProtocol(credit="grounded").question_scores(JUDG, PREDS)
    assert qs == {"a": 1.0, "b": 0.0, "c": 0.0, "d": 0.0}


def test_longmemeval_metrics_report_raw_and_grounded() -> None:
    preds = [{"question_id": k, "question": "Where is my kayak?", "gold": ["in the garage"], "answer": a,
              "gold_units": ["s"], "context_chapters": ["s"], "question_type": "single-session-user"}
             for k, a in (("a", "It's in the garage."), ("b", "I don't know where your kayak is kept."))]
    judg = [{"question_id": k, "question_type": "single-session-user", "is_abstention": False, "correct": 1}
            for k in "ab"]
    m = LongMemEvalProtocol(resamples=20, credit="grounded").metrics(judg, preds)
    assert m["overall"]["accuracy_raw"] == 1.0 and m["overall"]["accuracy_grounded"] == 0.5
    assert m["overall"]["accuracy"] == 0.5 and m["types"]["single-session-user"]["accuracy"] == 0.5
    assert m["judge_f1"]["raw"]["n"] == 2 and m["grounding_removed"] == 1
    assert "accuracy (grounded credit)" in LongMemEvalProtocol().table(m, {"method": "m"})


def test_f1_agreement_by_hand() -> None:
    out = f1_agreement([(1, 1.0), (1, 0.5), (0, 0.0), (0, 0.5)])
    # AUC pairs (correct vs wrong): 1>0, 1>.5, .5>0, .5=.5 (half) -> 3.5 / 4; agreement at 0.5: 3 of 4
    assert out["auc"] == pytest.approx(0.875) and out["agreement"] == pytest.approx(0.75)
    assert out["mean_f1_correct"] == pytest.approx(0.75) and out["mean_f1_wrong"] == pytest.approx(0.25)


# -- which credit is the headline: one rule for every dataset -------------------------------

@pytest.mark.parametrize("dataset", ["locomo", "longmemeval_oracle", "epbench20", "custom"])
def test_headline_credit_follows_the_judge_kind(dataset: str) -> None:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from memeval.harness.resolvers import register_resolvers
    from memeval.harness.schema import register_schemas

    register_resolvers()
    register_schemas()
    want = {"local": "grounded", "local_small": "grounded", "gpt4o": "raw", "openai_compatible": "raw"}
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        for judge, credit in want.items():
            cfg = compose("config", overrides=[f"dataset={dataset}", f"judge={judge}"])
            assert OmegaConf.to_container(cfg.dataset.protocol, resolve=True)["credit"] == credit, judge
        forced = compose("config", overrides=[f"dataset={dataset}", "judge=local", "dataset.protocol.credit=raw"])
        assert forced.dataset.protocol.credit == "raw"


def test_epbench_table_names_the_credit_in_its_header() -> None:
    line = {"question_id": "q", "bucket": "1", "get": "all", "retrieval_type": "Spaces", "judge_prompt": "p",
            "gold": ["Lisbon"], "matching_score": [1.0], "identified_items": ["Lisbon"],
            "matching_score_grounded": [1.0], "n_pred_grounded": 1, "identified_items_grounded": ["Lisbon"],
            "unsupported_items": [], "credited_absent_gold": [], "left_to_judge": [], "deterministic": None}
    p = EpBenchProtocol(resamples=5, credit="grounded")  # the line is complete: no matcher universe needed
    assert "| overall (grounded credit) |" in p.table(p.metrics([line], []), {"method": "m"})


# -- the label sets and judge_check --dataset ----------------------------------------------

@pytest.mark.parametrize("name", ["locomo", "longmemeval"])
def test_label_sets_cover_every_kind_and_store_no_benchmark_text(data_dir: Path, name: str) -> None:
    rel = "locomo/locomo10.json" if name == "locomo" else "longmemeval/longmemeval_oracle.json"
    if not (data_dir / rel).exists():
        pytest.skip(f"{rel} missing")
    cases = cjc.load_cases(cjc.LABELS[name], cjc.load_dataset(name, str(data_dir)))
    assert len(cases) >= 50 and {c.label["category"] for c in cases} >= KINDS - {"wrong-date-format"}
    assert 0.35 <= sum(c.label["correct"] for c in cases) / len(cases) <= 0.65
    for c in cases:
        assert set(c.label) <= {"id", "question_id", "category", "answer", "correct", "note"}
        assert c.question.text not in c.label["answer"]
    abst = [c for c in cases if c.question.id.endswith("_abs") or c.question.attrs.get("category") == 5]
    assert {c.label["correct"] for c in abst} == {0, 1}  # declining right and committing wrong, both present


@pytest.mark.parametrize("name", ["locomo", "longmemeval"])
def test_judge_check_deterministic_only(data_dir: Path, capsys, tmp_path: Path, name: str) -> None:
    out_json = tmp_path / "n.json"
    assert judge_check.main(["--dataset", name, "--deterministic-only", "--data-dir", str(data_dir),
                             "--json", str(out_json)]) == 0
    m = re.fullmatch(r"deterministic \(grounding only\) accuracy: (\d\.\d{3})",
                     capsys.readouterr().out.strip().splitlines()[-1])
    numbers = json.loads(out_json.read_text())["overall"]
    assert m and float(m.group(1)) == pytest.approx(numbers["grounding_only"]["accuracy"], abs=1e-3)
    # the grounding check beats bare token overlap on these answers (paraphrases, dates, refusals)
    assert numbers["grounding_only"]["accuracy"] > numbers["token_f1"]["accuracy"]


@pytest.mark.parametrize("name", ["locomo", "longmemeval"])
def test_judge_check_with_a_scripted_judge(data_dir: Path, scripted, capsys, tmp_path: Path, name: str) -> None:
    argv = ["--dataset", name, "--judge", "openai_compatible", "--data-dir", str(data_dir),
            "--cache", str(tmp_path / "c.sqlite"), "--every", "2",
            "--override", f"judge.base_url={scripted.base_url}", "judge.model=scripted-judge",
            "--json", str(tmp_path / "n.json")]
    assert judge_check.main(argv) == 0
    out = capsys.readouterr().out
    saved = json.loads((tmp_path / "n.json").read_text())
    numbers = saved["overall"]
    assert set(numbers) == set(cjc.CONFIGS) and numbers["raw"]["judge_failed"] == 0
    cases = cjc.load_cases(cjc.LABELS[name], cjc.load_dataset(name, str(data_dir)))[::2]
    # the shipped LoCoMo config judges version 2: category 5 by the decline check, no judge call
    version = 2 if name == "locomo" else 1
    assert saved["judge_version"] == version and f"judge version measured: {version}" in out
    called = [c for c in cases if not (version == 2 and c.question.attrs.get("category") == 5)]
    assert len(called) < len(cases) or name != "locomo"
    assert numbers["raw"]["n"] == len(cases) and scripted.count("/v1/chat/completions") == len(called)
    # grounding only ever withdraws credit
    assert numbers["grounded"]["false_correct"] <= numbers["raw"]["false_correct"]
    assert numbers["grounded"]["missed_correct"] >= numbers["raw"]["missed_correct"]


def test_lines_judged_before_grounding_get_the_same_grounded_metrics() -> None:
    """rescore on an old run: grounding comes from predictions.jsonl, identical to judge-time grounding."""
    preds = PREDS + [_lp("e", 5, NOT_MENTIONED, "Nothing about that was said."), _lp("f", 2, "7 May 2023", "2023-05-07")]
    fresh = []
    for p in preds:
        line = _locomo_line(p["question_id"], p["question"], p["gold"][0], p["category"], p["answer"])
        fresh.append(line)
    old = [{k: v for k, v in j.items() if k not in ("grounded", "grounding", "correct_grounded")} for j in fresh]
    proto = LoCoMoProtocol(resamples=20, credit="grounded", include_category_5=True)
    assert proto.metrics(old, preds) == proto.metrics(fresh, preds)
    assert proto.metrics(fresh, preds)["overall"]["judge_grounded"] == pytest.approx(4 / 6)  # a, d (kite), e, f


def test_custom_datasets_use_the_same_credit_switch() -> None:
    preds = [{"question_id": "t", "question": "What did Ines bring?", "gold": ["a red kite"], "answer_kind": "text",
              "answer": "Nothing about a red kite is mentioned.", "gold_units": [], "context_chapters": []},
             {"question_id": "i", "question": "Which towns did Ines visit?", "gold": ["Porto", "Braga"],
              "answer_kind": "items", "answer": "She visited Porto.", "gold_units": [], "context_chapters": []}]
    judg = [{"question_id": "t", "answer_kind": "text", "correct": 1},  # judged before grounding existed
            {"question_id": "i", "answer_kind": "items", "gold": ["Porto", "Braga"], "matching_score": [1.0, 1.0],
             "identified_items": ["Porto", "Braga"]}]
    raw = CustomProtocol(resamples=5).question_scores(judg, preds)
    grounded = CustomProtocol(resamples=5, credit="grounded").question_scores(judg, preds)
    assert raw == {"t": 1.0, "i": 1.0}
    assert grounded["t"] == 0.0 and grounded["i"] == pytest.approx(2 / 3)  # P 1/1, R 1/2
