"""Judge calibration: the known-wrong answers (which are kept, how a subset is drawn), the
false-accept lines of `memeval judge-check --known-wrong` against the scripted judge, and the
LoCoMo table header that reads the recorded rate."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memeval.cli import judge_check
from memeval.datasets.locomo import LoCoMoLoader
from memeval.evaluation import calibration
from memeval.evaluation.conversations import known_wrong as kw
from memeval.evaluation.conversations.locomo import LoCoMoProtocol

# invented wrong answers to real conv-30 questions (q2 "by dancing", q8 "28 January 2023",
# q39 "Contemporary"); q18 is a yes/no question, q21 and q31 are flagged by the gold audit
ROWS = [
    (39, 4, "specific_wrong", "Hip hop"),
    (8, 2, "specific_wrong", "28 February 2023"),  # the scripted judge: 2 of 3 gold words -> CORRECT
    (39, 4, "vague_topical", "An expressive style she loves"),
    (2, 4, "vague_topical", "by doing something active like dancing around"),  # accepted by both
    (18, 1, "vague_topical", "They probably do"),
    (21, 2, "specific_wrong", "April, 2023"),
    (31, 1, "specific_wrong", "two years"),
]
AUDIT = [{"sample_id": "conv-30", "qa_index": 21, "category": 2, "audit_b": {"label": "UNSUPPORTED"}},
         {"sample_id": "conv-30", "qa_index": 31, "category": 1, "audit_a": {"type": "TEMPORAL_ERROR",
                                                                             "score_corrupting": True}},
         {"sample_id": "conv-30", "qa_index": 39, "category": 4, "audit_a": {"type": "WRONG_CITATION",
                                                                             "score_corrupting": False}}]


def _write(folder: Path, rows: list[tuple[int, int, str, str]] = ROWS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "known_wrong_answers.jsonl").write_text("".join(json.dumps(
        {"sample_id": "conv-30", "qa_index": i, "category": c, "kind": k, "answer": a,
         "reference_judge_accepts": 1, "reference_judge_runs": 3}) + "\n" for i, c, k, a in rows))
    (folder / "gold_audit.jsonl").write_text("".join(json.dumps(r) + "\n" for r in AUDIT))
    return folder / "known_wrong_answers.jsonl"


@pytest.fixture(scope="module")
def conv30(data_dir: Path):  # noqa: ANN201
    return LoCoMoLoader(str(data_dir), conversations=["conv-30"]).load()


def test_flagged_yes_no_and_unknown_questions_are_left_out(tmp_path: Path, conv30) -> None:  # noqa: ANN001
    path = _write(tmp_path, [*ROWS, (0, 2, "specific_wrong", "3 March 2023")])
    flagged = kw.flagged_questions(tmp_path / "gold_audit.jsonl")
    assert flagged == {"conv-30-q21", "conv-30-q31"}  # a wrong citation alone flags no gold answer
    known = kw.load_known_wrong(path, conv30, flagged)
    assert [c.label["id"] for c in known.cases] == [
        "conv-30-q39-specific_wrong", "conv-30-q8-specific_wrong", "conv-30-q39-vague_topical",
        "conv-30-q2-vague_topical", "conv-30-q0-specific_wrong"]
    assert known.left_out == {"gold_audit": 2, "yes_no": 1, "not_in_dataset": 0} and known.n_rows == 8
    assert set(known.cases[0].speakers) == {"Jon", "Gina"}
    assert kw.is_yes_no("Would Gina enjoy a cruise?", "Likely no") and kw.is_yes_no("x?", "Yes, she did")
    assert not kw.is_yes_no("When was Jon in Paris?", "28 January 2023")
    bad = _write(tmp_path / "bad", [(8, 4, "specific_wrong", "x")])
    with pytest.raises(ValueError, match="category 2 in the data"):
        kw.load_known_wrong(bad, conv30)


def test_subset_is_stratified_by_kind_seeded_and_in_file_order(conv30) -> None:  # noqa: ANN001
    from memeval.evaluation.conversations.judge_check import Case

    q = conv30.questions[0]
    cases = [Case({"id": f"{k}{i}", "answer": "", "correct": 0, "category": k}, q)
             for k, n in (("a", 10), ("b", 3)) for i in range(n)]
    pick = kw.subset(cases, 8, seed=1)
    assert sorted(c.label["category"] for c in pick).count("b") == 3  # b gives what it lacks to a
    assert [cases.index(c) for c in pick] == sorted(cases.index(c) for c in pick)
    assert [c.label["id"] for c in kw.subset(cases, 8, seed=1)] == [c.label["id"] for c in pick]
    even = kw.subset(cases, 4, seed=0)
    assert sorted(c.label["category"] for c in even) == ["a", "a", "b", "b"]
    assert {tuple(c.label["id"] for c in kw.subset(cases, 4, seed=s)) for s in range(6)} != {
        tuple(c.label["id"] for c in even)}  # another seed, another draw
    assert kw.subset(cases, None) == cases


def test_judge_check_prints_false_accepts_and_records_them_for_the_header(
        data_dir: Path, scripted, tmp_path: Path, capsys, monkeypatch) -> None:  # noqa: ANN001
    path = _write(tmp_path / "audit")
    labels = tmp_path / "labels.jsonl"  # two labels keep the run short
    labels.write_text("".join(line + "\n" for line in
                              (Path(judge_check.ROOT) / "src/memeval/evaluation/judge_meta/locomo_labels.jsonl")
                              .read_text().splitlines()[:2]))
    cal = tmp_path / "calibration.json"
    argv = ["--dataset", "locomo", "--judge", "openai_compatible", "--data-dir", str(data_dir),
            "--cache", str(tmp_path / "c.sqlite"), "--labels", str(labels), "--known-wrong", str(path),
            "--calibration", str(cal), "--json", str(tmp_path / "n.json"),
            "--override", f"judge.base_url={scripted.base_url}", "judge.model=scripted-judge"]
    assert judge_check.main(argv) == 0
    out = capsys.readouterr().out
    block = out.split("Known-wrong answers:")[1]
    assert "left out: 2 on questions a gold audit flags, 1 on yes/no questions" in block
    found = re.findall(r"^(\w+): accuracy .*\n  (false-accept rate: .*)\n  (false-accept rate: .*)$", block, re.M)
    assert [f[0] for f in found] == ["raw", "grounded", "grounding_only", "token_f1"]
    lines = {f[0]: f[1:] for f in found}
    # raw: "28 February 2023" (2 of 3 gold words) and "...like dancing around" pass the scripted judge
    assert lines["raw"] == ("false-accept rate: 0.500 on 2 known-wrong answers (kind specific_wrong)",
                            "false-accept rate: 0.500 on 2 known-wrong answers (kind vague_topical)")
    # grounded: the wrong date is not the gold's day; "dancing" is the gold's key word
    assert lines["grounded"] == ("false-accept rate: 0.000 on 2 known-wrong answers (kind specific_wrong)",
                                 "false-accept rate: 0.500 on 2 known-wrong answers (kind vague_topical)")
    assert out.strip().splitlines()[-1].startswith("deterministic (grounding only) accuracy: ")
    numbers = json.loads((tmp_path / "n.json").read_text())["known_wrong"]
    assert numbers["n_judged"] == 4 and numbers["false_accept"]["raw"]["specific_wrong"]["accepted"] == 1
    calls = scripted.count("/v1/chat/completions")
    assert judge_check.main(argv) == 0 and scripted.count("/v1/chat/completions") == calls  # the cache pays
    capsys.readouterr()

    entries = calibration.read_entries(cal)
    assert {e["configuration"] for e in entries} == {"raw", "grounded", "grounding_only", "token_f1"}
    assert len(entries) == 4  # measured twice, recorded once per key
    meta = {"judge_model": "scripted-judge", "protocol": LoCoMoProtocol().describe()}
    monkeypatch.setenv("MEMEVAL_JUDGE_CALIBRATION", str(cal))
    line = calibration.header_line("locomo", meta, "locomo-judge-v2", "grounded")
    assert line.startswith("- judge false-accept rate (grounded credit): 0.000 on 2 known-wrong answers "
                           "(kind specific_wrong); 0.500 on 2 known-wrong answers (kind vague_topical)")
    # another grounding version, judge or prompt was not measured
    old = {**meta, "protocol": LoCoMoProtocol(grounding_version=1).describe()}
    assert "not measured" in calibration.header_line("locomo", old, "locomo-judge-v2", "grounded")
    assert "raw credit): 0.500" in calibration.header_line("locomo", old, "locomo-judge-v2", "raw")
    assert "not measured" in calibration.header_line("locomo", {**meta, "judge_model": "x"},
                                                     "locomo-judge-v2", "grounded")


def test_the_locomo_table_names_the_rate_or_says_it_is_not_measured(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMEVAL_JUDGE_CALIBRATION", str(tmp_path / "none.json"))
    p = LoCoMoProtocol(resamples=10, credit="grounded")
    preds = [{"question_id": "a", "category": 1, "gold": ["x"], "answer": "x", "gold_units": [],
              "context_chapters": []}]
    judgments = [{"question_id": "a", "category": 1, "correct": 1, "grounded": True,
                  "judge_prompt": "locomo-judge-v2"}]
    meta = {"judge_model": "j", "protocol": p.describe()}
    metrics = p.metrics(judgments, preds)
    assert "- judge false-accept rate: not measured" in p.table(metrics, meta)
    calibration.record([{"dataset": "locomo", "judge_model": "j", "judge_prompt": "locomo-judge-v2",
                         "configuration": "grounded", "grounding_version": p.grounding_version,
                         "false_accept": {"specific_wrong": {"rate": 0.25, "n": 8}}}])
    assert "judge false-accept rate (grounded credit): 0.250 on 8 known-wrong answers (kind specific_wrong)" \
        in p.table(metrics, meta)
    assert metrics == p.metrics(judgments, preds)  # the rate is shown, never part of metrics.json


def test_known_wrong_needs_locomo_and_names_the_fix(data_dir: Path, tmp_path: Path, capsys) -> None:
    assert judge_check.main(["--dataset", "epbench", "--deterministic-only", "--known-wrong",
                             "--data-dir", str(data_dir)]) == 2
    assert "has no known-wrong answers (those that have: locomo)" in capsys.readouterr().err
    from memeval.cli.known_wrong import known_wrong_file
    from memeval.evaluation.adapters import label_sets

    locomo = label_sets()["locomo"]

    empty = tmp_path / "data"
    empty.mkdir()
    if not (judge_check.ROOT.parent / "shared" / "data" / kw.KNOWN_WRONG).exists():
        with pytest.raises(FileNotFoundError, match="locomo/audit"):
            known_wrong_file("", str(empty), locomo)
    else:
        assert known_wrong_file("", str(empty), locomo) == judge_check.ROOT.parent / "shared" / "data" / kw.KNOWN_WRONG
        assert "is missing; reading" in capsys.readouterr().err
