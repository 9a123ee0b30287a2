"""LoCoMo and LongMemEval: loaders, judge dispatch, metrics on hand-built artifacts, tables."""

from __future__ import annotations

import asyncio
import gzip
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import memeval.datasets.longmemeval as lme_data
from memeval.datasets.integrity import DataFile
from memeval.datasets.locomo import CATEGORY_NAMES, NOT_MENTIONED, LoCoMoLoader, parse_evidence
from memeval.datasets.longmemeval import LongMemEvalLoader, iter_json_array
from memeval.datasets.types import Question
from memeval.evaluation.conversations.locomo import PROMPT_VERSION, LoCoMoProtocol
from memeval.evaluation.conversations.longmemeval import (
    LongMemEvalProtocol,
    judge_kind,
    judge_messages,
    parse_yes_no,
)
from memeval.model_access.chat import ChatResult
from memeval.model_access.errors import ConfigError

META = {"answer_model": "m", "judge_model": "j", "data_version": "v", "method": "embedding_rag"}


class FakeJudge:
    """Records the messages it is sent; answers with a fixed text or a pydantic object."""

    def __init__(self, text: str = "", parsed: Any = None) -> None:
        self.text, self.parsed, self.seen = text, parsed, []

    async def complete(self, messages, max_tokens=None, response_format=None) -> ChatResult:
        self.seen.append(messages)
        return ChatResult(self.text, 1, 1, False, "fake")

    async def complete_json(self, messages, model, max_tokens=None):
        self.seen.append(messages)
        return model.model_validate(self.parsed), ChatResult("{}", 1, 1, False, "fake")


# -- LoCoMo --------------------------------------------------------------------------------

def test_locomo_loader(data_dir: Path) -> None:
    if not (data_dir / "locomo/locomo10.json").exists():
        pytest.skip("locomo10.json missing: run `python scripts/fetch_data.py`")
    ds = LoCoMoLoader(str(data_dir)).load()
    assert len(ds.questions) == 1986 and len(ds.corpora) == 10
    assert Counter(q.attrs["category"] for q in ds.questions) == {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}
    assert ds.natural_cap.max_units == 5 and ds.natural_cap.max_tokens is None
    assert ds.strata_key == "category"
    unit = ds.corpora["conv-26"].units[0]
    assert (unit.id, unit.timestamp) == ("1", "1:56 pm on 8 May, 2023")
    assert unit.text.startswith("Caroline: Hey Mel!")
    q5 = next(q for q in ds.questions if q.attrs["category"] == 5)
    assert q5.gold == (NOT_MENTIONED,) and q5.attrs["adversarial_answer"] == "self-care is important"
    assert all(isinstance(q.gold[0], str) for q in ds.questions)  # int answers stringified
    assert next(q for q in ds.questions if q.id == "conv-26-q1").gold == ("2022",)


def test_locomo_loader_keeps_chosen_conversations_and_the_full_cap(data_dir: Path) -> None:
    if not (data_dir / "locomo/locomo10.json").exists():
        pytest.skip("locomo10.json missing: run `python scripts/fetch_data.py`")
    ds = LoCoMoLoader(str(data_dir), conversations=["conv-30"]).load()
    assert list(ds.corpora) == ["conv-30"] and len(ds.corpora["conv-30"].units) == 19
    assert Counter(q.attrs["category"] for q in ds.questions) == {1: 11, 2: 26, 4: 44, 5: 24}
    assert ds.natural_cap.max_units == 5  # derived from all ten conversations, not this one
    assert any("conv-30" in n for n in ds.notes)
    with pytest.raises(ConfigError, match="conv-99.*conv-26"):
        LoCoMoLoader(str(data_dir), conversations=["conv-99"]).load()


def test_locomo_evidence_parsing_tolerates_malformed_ids() -> None:
    assert parse_evidence(["D8:6; D9:17", "D:11:26", "D", "D9:1 D4:4"]) == ["D8:6", "D9:17", "D11:26", "D9:1", "D4:4"]


def _lp(qid: str, cat: int, gold: str, answer: str, units=("1",), ctx=("1",)) -> dict[str, Any]:
    return {"question_id": qid, "gold": [gold], "category": cat, "answer": answer,
            "gold_units": list(units), "context_chapters": list(ctx), "context_tokens": 10}


PREDS = [
    _lp("a", 1, "Paris, Rome", "Paris, London"),          # F1 0.5
    _lp("b", 2, "7 May 2023", "7 May 2023", ctx=("2",)),  # F1 1, recall 0
    _lp("c", 4, "painting sunrises", "She painted a sunrise"),  # F1 0.8
    _lp("d", 5, NOT_MENTIONED, "Not mentioned in the conversation"),  # F1 1
]
JUDG = [{"question_id": q, "category": c, "judge_prompt": PROMPT_VERSION, **v} for q, c, v in [
    ("a", 1, {"correct": 0}), ("b", 2, {"correct": 1}), ("c", 4, {"judge_error": "bad json"}),
    ("d", 5, {"correct": 1})]]


def test_locomo_metrics_hand_computed() -> None:
    m = LoCoMoProtocol(resamples=50).metrics(JUDG, PREDS)
    assert m["category_names"] == CATEGORY_NAMES
    assert m["categories"]["1"]["f1"] == pytest.approx(0.5)
    assert m["categories"]["2"]["evidence_recall"] == 0.0
    assert m["categories"]["4"]["f1"] == pytest.approx(0.8)
    assert math.isnan(m["categories"]["4"]["judge"]) and m["categories"]["4"]["n_judged"] == 0
    assert m["categories"]["5"]["f1"] == 1.0
    # overall = categories 1-4: F1 (0.5 + 1 + 0.8) / 3; J over judged ones: (0 + 1) / 2
    assert m["overall"]["f1"] == pytest.approx(2.3 / 3)
    assert m["overall"]["judge"] == pytest.approx(0.5)
    assert m["overall"]["n"] == 3 and m["n_judge_failed"] == 1
    with5 = LoCoMoProtocol(include_category_5=True, resamples=50).metrics(JUDG, PREDS)
    assert with5["overall"]["n"] == 4 and with5["overall"]["f1"] == pytest.approx(3.3 / 4)
    assert LoCoMoProtocol(resamples=50).metrics(JUDG, PREDS, policy="categories_1_5") == with5


def test_locomo_table_prints_mapping_and_provenance() -> None:
    p = LoCoMoProtocol(resamples=50)
    table = p.table(p.metrics(JUDG, PREDS), META)
    assert table.startswith("- answering model: **m**; judge: **j**")
    assert "1 = multi-hop, 2 = temporal, 3 = open-domain, 4 = single-hop, 5 = adversarial" in table
    assert PROMPT_VERSION in table and "| 5 adversarial | 1 |" in table


def test_locomo_judge_records_prompt_version_and_category_5_trap() -> None:
    q = Question("x", "conv-1", "What did Caroline realize?", (NOT_MENTIONED,),
                 attrs={"category": 5, "adversarial_answer": "self-care is important"})
    judge = FakeJudge(parsed={"reasoning": "declined", "label": "CORRECT"})
    line = asyncio.run(LoCoMoProtocol(judge_version=1).judge(q, {"answer": "Not mentioned"}, None, judge))
    assert line["judge_prompt"] == PROMPT_VERSION and line["correct"] == 1 and line["category"] == 5
    prompt = judge.seen[0][-1]["content"]
    assert "'self-care is important'" in prompt and "WRONG" in prompt


def test_locomo_judge_version_2_scores_category_5_by_the_decline_check() -> None:
    q5 = Question("x", "conv-1", "What did Caroline realize?", (NOT_MENTIONED,),
                  attrs={"category": 5, "adversarial_answer": "self-care is important"})
    q4 = Question("y", "conv-1", "Where did Mel go?", ("the beach",), attrs={"category": 4})
    seen = {}
    for version in (1, 2):
        judge = FakeJudge(parsed={"reasoning": "r", "label": "WRONG"})  # a judge that fails refusals
        proto = LoCoMoProtocol(judge_version=version)
        lines = [asyncio.run(proto.judge(q, {"answer": a}, None, judge))
                 for q, a in ((q5, "That is not mentioned anywhere."), (q5, "Self-care matters"), (q4, "x"))]
        assert {ln["judge_prompt"] for ln in lines} == {f"locomo-judge-v{version}"}
        seen[version] = (judge.seen, [ln["correct"] for ln in lines])
    assert seen[1][1] == [0, 0, 0]  # version 1: the judge's WRONG stands
    assert seen[2][1] == [1, 0, 0]  # version 2: a decline is correct, the trap answer is not
    assert len(seen[2][0]) == 1 and seen[2][0][0] == seen[1][0][2]  # only category 4 asked, same messages
    assert "by the judge" in LoCoMoProtocol(judge_version=1).describe()["category_5"]
    assert "decline check" in LoCoMoProtocol().describe()["category_5"]  # version 2: the default
    with pytest.raises(ValueError, match="judge_version must be one of"):
        LoCoMoProtocol(judge_version=3)


# -- LongMemEval ---------------------------------------------------------------------------

@pytest.mark.parametrize(("qtype", "abs_", "kind", "phrase"), [
    ("temporal-reasoning", False, "temporal-reasoning", "off-by-one"),
    ("knowledge-update", False, "knowledge-update", "most recent value"),
    ("single-session-preference", False, "single-session-preference", "Rubric:"),
    ("single-session-user", False, "default", "Correct answer:"),
    ("multi-session", False, "default", "Correct answer:"),
    ("single-session-assistant", False, "default", "Correct answer:"),
    ("temporal-reasoning", True, "abstention", "Why it cannot be answered:"),
    ("multi-session", True, "abstention", "cannot be answered"),
])
def test_longmemeval_judge_dispatch(qtype: str, abs_: bool, kind: str, phrase: str) -> None:
    assert judge_kind(qtype, abs_) == kind
    assert phrase in judge_messages(kind, "q?", "gold", "reply")[-1]["content"]


def test_parse_yes_no() -> None:
    assert parse_yes_no("Yes.") is True
    assert parse_yes_no("no, the reply is wrong") is False
    assert parse_yes_no("The answer is: yes") is True
    assert parse_yes_no("Yesterday, maybe") is None


def test_longmemeval_judge_line_and_abstention() -> None:
    q = Question("q1_abs", "h", "When did I buy cows?", ("Not enough information.",),
                 attrs={"question_type": "multi-session", "is_abstention": True})
    judge = FakeJudge(text="yes")
    line = asyncio.run(LongMemEvalProtocol().judge(q, {"answer": "I do not know."}, None, judge))
    assert line["judge_kind"] == "abstention" and line["judge_prompt"] == "lme-abstention-v1"
    assert line["correct"] == 1
    bad = asyncio.run(LongMemEvalProtocol().judge(q, {"answer": "x"}, None, FakeJudge(text="unsure")))
    assert "judge_error" in bad and "correct" not in bad


def _lj(qid: str, qtype: str, correct: int | None, abs_: bool = False) -> dict[str, Any]:
    line = {"question_id": qid, "question_type": qtype, "is_abstention": abs_, "judge_prompt": "p"}
    if correct is None:
        line["judge_error"] = "neither"
    else:
        line["correct"] = correct
    return line


def test_longmemeval_metrics_hand_computed() -> None:
    judg = [_lj("a", "temporal-reasoning", 1), _lj("b", "temporal-reasoning", 0),
            _lj("c", "knowledge-update", 1), _lj("d_abs", "multi-session", 1, True),
            _lj("e", "multi-session", None)]
    preds = [{"question_id": k, "gold_units": ["s1"], "context_chapters": ["s1"] if k != "b" else []}
             for k in "abcde"]
    m = LongMemEvalProtocol(variant="s", resamples=50).metrics(judg, preds)
    assert m["overall"]["accuracy"] == pytest.approx(0.75) and m["overall"]["n"] == 4
    assert m["types"]["temporal-reasoning"]["accuracy"] == 0.5
    assert m["types"]["temporal-reasoning"]["evidence_recall"] == 0.5
    assert m["abstention"] == {**m["abstention"], "accuracy": 1.0, "n": 1}
    assert m["task_averaged_accuracy"] == pytest.approx((0.5 + 1 + 1) / 3)
    assert m["n_judge_failed"] == 1 and m["judge_failed_ids"] == ["e"]
    assert "UNVERIFIED" in m["data_warning"]
    assert "UNVERIFIED" in LongMemEvalProtocol(variant="s").table(m, META)
    assert "data_warning" not in LongMemEvalProtocol(resamples=50).metrics(judg, preds)


def _instance(qid: str, date: str = "2023/05/01 (Mon) 10:00") -> dict[str, Any]:
    return {"question_id": qid, "question_type": "multi-session", "question": f"{qid}?", "answer": 3,
            "question_date": "2023/06/01 (Thu) 09:00",
            "haystack_session_ids": ["s2", "s1"], "haystack_dates": [date, "2023/04/01 (Sat) 10:00"],
            "haystack_sessions": [[{"role": "user", "content": "I own 3 cats.", "has_answer": True}],
                                  [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]],
            "answer_session_ids": ["s2"]}


def test_longmemeval_identical_haystacks_share_one_corpus(tmp_path: Path, monkeypatch, capsys) -> None:
    rel = Path(lme_data.FILES["s"])
    (tmp_path / rel.parent).mkdir(parents=True)
    rows = [_instance("q1"), _instance("q2_abs"), _instance("q3", date="2023/05/02 (Tue) 10:00")]
    with gzip.open(tmp_path / rel, "wt", encoding="utf-8") as f:
        json.dump(rows, f)
    monkeypatch.setattr(lme_data, "verify", lambda root, r, files=None: DataFile(r, None, "unverified"))
    ds = LongMemEvalLoader("s", str(tmp_path)).load()
    q1, q2, q3 = ds.questions
    assert q1.corpus_id == q2.corpus_id != q3.corpus_id and len(ds.corpora) == 2
    units = ds.corpora[q1.corpus_id].units
    assert [u.id for u in units] == ["s1", "s2"]  # ordered by date
    assert units[0].text == "user: Hi\n\nassistant: Hello" and units[1].timestamp.startswith("2023/05/01")
    assert units[1].text is ds.corpora[q3.corpus_id].units[1].text  # one string per distinct session
    assert q1.gold == ("3",) and q1.gold_units == ("s2",) and q2.attrs["is_abstention"]
    assert q1.attrs["question_date"] == "2023/06/01 (Thu) 09:00"
    assert ds.natural_cap.max_units == 1 and ds.natural_cap.max_tokens > 0
    assert "UNVERIFIED" in ds.notes[0] and "UNVERIFIED" in capsys.readouterr().err
    assert "unverified" in ds.version


def test_iter_json_array_across_chunk_boundaries(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    rows = [{"k": i, "s": "x, ] [" * i} for i in range(5)]
    path.write_text(" [\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n")
    assert list(iter_json_array(path, chunk_chars=7)) == rows
    path.write_text("[]")
    assert list(iter_json_array(path)) == []


def test_locomo_judge_version_2_is_named_in_report_provenance() -> None:
    from memeval.evaluation.runs.scored import Run

    proto = LoCoMoProtocol(judge_version=2).describe()
    runs = [Run(Path("runs/locomo/m-1"), {"judge_model": "j", "protocol": p}, {"policy": "categories_1_4"},
                {}, [], []) for p in (LoCoMoProtocol(judge_version=1).describe(), proto)]
    v1, v2 = (r.provenance()["judge_model"] for r in runs)
    assert (v1, v2) == ("j (judge version 1)", "j (judge version 2)")
