"""Custom datasets: the example loads; every malformed file fails naming file, line and field;
the cap is derived or demanded; retrieval diagnostics and failure labels on hand-made rows."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from memeval.datasets.custom import CustomDataError, CustomLoader
from memeval.datasets.types import Corpus, Unit
from memeval.evaluation.custom import CustomProtocol
from memeval.evaluation.retrieval_diagnostics import (
    diagnose,
    failure_label,
    question_diagnostics,
    table_section,
    unit_token_attribution,
)
from memeval.model_access.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "saltmarsh"


def _copy(tmp: Path) -> Path:
    d = tmp / "data"
    shutil.copytree(EXAMPLE, d)
    return d


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_example_loads() -> None:
    ds = CustomLoader(str(EXAMPLE)).load()
    assert ds.name == "custom-saltmarsh" and len(ds.corpora) == 1
    (cid, corpus), = ds.corpora.items()
    assert cid.startswith("main-") and {q.corpus_id for q in ds.questions} == {cid}
    units = corpus.units
    assert [u.id for u in units] == ["1", "2", "3", "4", "5", "6"] and units[2].title == "Fog in the Channel"
    assert units[0].timestamp == "2031-03-03"
    assert ds.natural_cap.max_units == 3  # q1 and q4 cite three chapters
    assert ds.strata_key == "hops" and ds.group_keys == ["hops", "topic"]
    kinds = {q.id: q.attrs["answer_kind"] for q in ds.questions}
    assert kinds["q1"] == "items" and kinds["q2"] == "text" and kinds["q10"] == "items"
    q10 = next(q for q in ds.questions if q.id == "q10")
    assert q10.gold == () and q10.gold_units == ()


def test_order_field_sorts_units(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    rows = _lines(d / "units.jsonl")
    rows[0]["order"], rows[1]["order"] = 10, 0
    _write(d / "units.jsonl", rows)
    (corpus,) = CustomLoader(str(d)).load().corpora.values()
    assert [u.id for u in corpus.units][:2] == ["2", "3"]
    # an edited corpus gets another id, hence another index folder (no stale GSW workspace)
    assert corpus.id != next(iter(CustomLoader(str(EXAMPLE)).load().corpora))


def _break(tmp: Path, fname: str, line: int, edit) -> Path:  # noqa: ANN001
    d = _copy(tmp)
    rows = _lines(d / fname)
    edit(rows, line - 1)
    _write(d / fname, rows)
    return d


CASES = [
    ("missing unit text", "units.jsonl", 3, lambda r, i: r[i].pop("text"), "units.jsonl:3: field 'text': missing"),
    ("duplicate unit id", "units.jsonl", 4, lambda r, i: r[i].update(id="2"),
     "units.jsonl:4: field 'id': duplicate unit id '2' in corpus 'main' (first on line 2)"),
    ("unsafe unit id", "units.jsonl", 2, lambda r, i: r[i].update(id="../x"), "units.jsonl:2: field 'id': '../x' is not a valid id"),
    ("missing question", "questions.jsonl", 5, lambda r, i: r[i].pop("question"),
     "questions.jsonl:5: field 'question': missing"),
    ("missing answer", "questions.jsonl", 2, lambda r, i: r[i].pop("answer"), "questions.jsonl:2: field 'answer': missing"),
    ("answer of a wrong type", "questions.jsonl", 2, lambda r, i: r[i].update(answer={"a": 1}),
     "questions.jsonl:2: field 'answer': must be a list of strings or a string"),
    ("duplicate question id", "questions.jsonl", 7, lambda r, i: r[i].update(id="q3"),
     "questions.jsonl:7: field 'id': duplicate question id 'q3' (first on line 3)"),
    ("unknown gold unit", "questions.jsonl", 6, lambda r, i: r[i].update(gold_units=["3", "9"]),
     "questions.jsonl:6: field 'gold_units': unknown unit id(s) '9' in corpus 'main'"),
    ("unknown corpus", "questions.jsonl", 1, lambda r, i: r[i].update(corpus="other"),
     "questions.jsonl:1: field 'corpus': unknown corpus 'other'"),
    ("typo in a field name", "questions.jsonl", 4, lambda r, i: r[i].update(gold_unit=["1"]),
     "questions.jsonl:4: field 'gold_unit': unknown field (did you mean 'gold_units'?)"),
    ("nested stratum", "questions.jsonl", 8, lambda r, i: r[i].update(strata={"hops": ["a"]}),
     "questions.jsonl:8: field 'strata.hops': must be a string, number or boolean"),
    ("partial order", "units.jsonl", 5, lambda r, i: r[i].pop("order"), "units.jsonl:5: field 'order': missing"),
]


@pytest.mark.parametrize(("name", "fname", "line", "edit", "expected"), CASES, ids=[c[0] for c in CASES])
def test_malformed_files_name_file_line_field(tmp_path: Path, name: str, fname: str, line: int, edit,  # noqa: ANN001
                                              expected: str) -> None:
    d = _break(tmp_path, fname, line, edit)
    with pytest.raises(CustomDataError) as err:
        CustomLoader(str(d)).load()
    assert str(d / expected.split(":")[0]) + ":" + expected.split(":", 1)[1] in str(err.value)
    assert "docs/CUSTOM_DATASET.md" in str(err.value)


def test_non_utf8_and_bad_json_lines(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    raw = (d / "units.jsonl").read_bytes().split(b"\n")
    raw[1] = raw[1].replace(b"Oskar", b"\xe9Oskar", 1)
    raw.insert(3, b"{not json")
    (d / "units.jsonl").write_bytes(b"\n".join(raw))
    with pytest.raises(CustomDataError) as err:
        CustomLoader(str(d)).load()
    msg = str(err.value)
    assert f"{d / 'units.jsonl'}:2: not valid UTF-8 (byte 0xe9" in msg
    assert f"{d / 'units.jsonl'}:4: not valid JSON" in msg
    assert "3 problem(s)" in msg  # all at once; a question citing the unreadable unit says why
    assert "questions.jsonl:3: field 'gold_units': unknown unit id(s) '2'" in msg and "fix those first" in msg


def test_all_problems_reported_together(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    q = _lines(d / "questions.jsonl")
    q[0].pop("id")
    q[1]["gold_units"] = ["7"]
    _write(d / "questions.jsonl", q)
    with pytest.raises(CustomDataError) as err:
        CustomLoader(str(d)).load()
    assert "questions.jsonl:1: field 'id'" in str(err.value) and "questions.jsonl:2: field 'gold_units'" in str(err.value)


def test_cap_required_without_gold_units(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    q = _lines(d / "questions.jsonl")
    for row in q:
        row.pop("gold_units")
    _write(d / "questions.jsonl", q)
    with pytest.raises(ConfigError, match=r"context_cap.units=N"):
        CustomLoader(str(d)).load()
    assert CustomLoader(str(d), context_cap_units=2).load().natural_cap.max_units == 2


def test_missing_path_and_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="dataset.path=DIR"):
        CustomLoader(None).load()
    with pytest.raises(CustomDataError, match="units.jsonl is missing"):
        CustomLoader(str(tmp_path)).load()


def test_several_corpora_need_a_corpus_per_question(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    units = _lines(d / "units.jsonl")
    units.append({"id": "1", "corpus": "diary", "text": "A second corpus may reuse unit ids."})
    _write(d / "units.jsonl", units)
    with pytest.raises(CustomDataError, match=r"questions.jsonl:1: field 'corpus': missing"):
        CustomLoader(str(d)).load()
    q = [{**r, "corpus": "main"} for r in _lines(d / "questions.jsonl")]
    _write(d / "questions.jsonl", q)
    assert {c.split("-")[0] for c in CustomLoader(str(d)).load().corpora} == {"main", "diary"}


# -- retrieval diagnostics -------------------------------------------------------------------
def _corpus() -> Corpus:
    return Corpus("c", (Unit("1", "x", 0, title="Chapter 1"), Unit("12", "y", 1, title="Chapter 12"),
                        Unit("s3", "z", 2, timestamp="2030-01-02")))


def test_token_attribution_by_block_header() -> None:
    body = "alpha beta gamma delta " * 10
    ctx = (f"preamble words here\n\n### Chapter 12\n{body}\n\n### Chapter 1: Some Entity\n{body}\n\n"
           f"### Session s3 (2030-01-02)\n{body}\n\n### Unknown heading\n{body}")
    tokens = unit_token_attribution(ctx, ["1", "12", "s3"], _corpus())
    assert set(tokens) == {"", "1", "12", "s3"}
    assert abs(tokens["1"] - tokens["12"]) <= 3 and tokens[""] > tokens["1"]  # preamble + unknown block
    # a unit outside context_chapters is never credited, even when its header appears
    assert "12" not in unit_token_attribution(ctx, ["1"], _corpus())


def test_question_diagnostics_and_labels() -> None:
    p = {"gold_units": ["1", "12"], "context_chapters": ["12", "s3"],
         "context_unit_tokens": {"12": 30, "s3": 60, "": 10}}
    d = question_diagnostics(p)
    assert d["gold_recall"] == 0.5 and d["all_gold_present"] is False and d["gold_token_share"] == 0.3
    assert failure_label(d, False) == "partial_retrieval" and failure_label(d, True) == "correct"
    assert failure_label(d, None) == "unjudged"
    miss = question_diagnostics({"gold_units": ["1"], "context_chapters": ["s3"]})
    assert failure_label(miss, False) == "retrieval_miss" and math.isnan(miss["gold_token_share"])
    full = question_diagnostics({"gold_units": ["1"], "context_chapters": ["1", "s3"],
                                 "context_unit_tokens": {"": 50}})
    assert failure_label(full, False) == "generation_miss" and math.isnan(full["gold_token_share"])
    none = question_diagnostics({"gold_units": [], "context_chapters": ["1"]})
    assert math.isnan(none["gold_recall"]) and failure_label(none, False) == "generation_miss"


def test_diagnose_groups_and_correctness_per_protocol() -> None:
    preds = [
        {"question_id": "a", "gold_units": ["1"], "context_chapters": ["1"], "answer_kind": "text",
         "gold": ["yes"], "answer": "yes", "topic": "t1", "strata_keys": ["topic"]},
        {"question_id": "b", "gold_units": ["1", "2"], "context_chapters": ["2"], "answer_kind": "items",
         "gold": ["x", "y"], "answer": "x", "topic": "t1", "strata_keys": ["topic"]},
        {"question_id": "c", "gold_units": ["3"], "context_chapters": ["1"], "answer_kind": "items",
         "gold": ["z"], "answer": "z", "topic": "t2", "strata_keys": ["topic"]},
    ]
    judg = [{"question_id": "a", "answer_kind": "text", "correct": 1},
            # half the items: F1 < 1, so not correct
            {"question_id": "b", "answer_kind": "items", "gold": ["x", "y"], "matching_score": [1, 0],
             "identified_items": ["x"]},
            # full credit although no gold unit was retrieved: still "correct"
            {"question_id": "c", "answer_kind": "items", "gold": ["z"], "matching_score": [1],
             "identified_items": ["z"]}]
    per_q, summary = diagnose(CustomProtocol(resamples=50), judg, preds, {"group_keys": ["topic"]})
    assert [per_q[q]["failure_label"] for q in "abc"] == ["correct", "partial_retrieval", "correct"]
    assert summary["overall"]["labels"]["correct"] == 2 and summary["overall"]["gold_recall"] == pytest.approx(0.5)
    assert summary["groups"]["topic"]["t1"]["n"] == 2 and summary["groups"]["topic"]["t2"]["gold_recall"] == 0
    text = table_section(summary, "m")
    assert "| topic=t2 | 1 | 1 | 0.000" in text and "2 / 0 / 1 / 0" in text
