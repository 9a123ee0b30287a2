"""The judge meta-evaluation: the label file is well formed, and judge_check runs end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memeval.cli import judge_check
from memeval.datasets.epbench import EpBenchLoader
from memeval.evaluation.epbench import judge_check as labels
from memeval.evaluation.epbench.universe import KIND_BY_RETRIEVAL

CATEGORIES = {"correct", "partial", "refusal", "hallucinated", "over-long", "paraphrase", "wrong-date-format",
              "zero-cue-refusal", "zero-cue-hallucinated"}


@pytest.fixture(scope="module")
def cases(data_dir: Path) -> list[labels.Case]:
    return labels.load_cases(labels.LABELS, EpBenchLoader(20, str(data_dir)).load())


def test_labels_cover_every_kind_and_store_no_benchmark_text(cases: list[labels.Case]) -> None:
    assert len(cases) >= 60
    assert {c.label["category"] for c in cases} == CATEGORIES
    assert {c.question.attrs["retrieval_type"] for c in cases} == set(KIND_BY_RETRIEVAL)
    for c in cases:
        assert set(c.label) <= {"id", "question_id", "category", "answer", "credit", "n_items", "note"}
        assert all(x in (0, 0.5, 1) for x in c.label["credit"]) and c.label["n_items"] >= 0
        assert c.question.text not in c.label["answer"]
    assert len({c.label["id"] for c in cases}) == len(cases)


def test_deterministic_only_prints_the_matcher_accuracy_last(data_dir: Path, capsys, tmp_path: Path) -> None:
    out_json = tmp_path / "numbers.json"
    assert judge_check.main(["--deterministic-only", "--data-dir", str(data_dir), "--json", str(out_json)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    m = re.fullmatch(r"deterministic matcher accuracy: (\d\.\d{3})", lines[-1])
    assert m and 0.8 <= float(m.group(1)) <= 1.0
    numbers = json.loads(out_json.read_text())
    assert numbers["overall"]["deterministic"]["accuracy"] == pytest.approx(float(m.group(1)), abs=1e-3)
    assert numbers["overall"]["deterministic"]["n_credits"] >= 100


def test_grounding_only_counts_the_claims_of_zero_cue_answers_under_the_shipped_version(
        data_dir: Path, capsys, tmp_path: Path) -> None:
    # grounding version 4 counts a claim for a 0-cue answer that asserts something (invented places,
    # a bare year); version 3 scored those F1 1, so its F1 error on them is 1 per answer. Version 5
    # also counts a bare place of the book that is two words beyond the question (e80), which 4 missed;
    # version 6 any answer that is not a decline: an echo of the question's cue (e81), a chunk tag (e82)
    errors = {}
    for version in (3, 4, 5, 6):
        out_json = tmp_path / f"v{version}.json"
        argv = ["--deterministic-only", "--data-dir", str(data_dir), "--json", str(out_json),
                "--override", f"dataset.protocol.grounding_version={version}"]
        assert judge_check.main(argv) == 0
        cats = json.loads(out_json.read_text())["by_category"]
        errors[version] = {c: cats[c]["grounding_only"]["f1_mae"] for c in ("zero-cue-hallucinated", "refusal",
                                                                          "zero-cue-refusal")}
    capsys.readouterr()
    assert errors[3]["zero-cue-hallucinated"] >= 0.5
    assert errors[4]["zero-cue-hallucinated"] == pytest.approx(3 / 8)  # e80, e81 and e82 of the eight
    assert errors[5]["zero-cue-hallucinated"] == pytest.approx(2 / 8)  # e81 and e82
    assert errors[6] == {"zero-cue-hallucinated": 0.0, "refusal": 0.0, "zero-cue-refusal": 0.0}


def test_all_configurations_against_a_scripted_judge(data_dir: Path, scripted, capsys, tmp_path: Path) -> None:
    """One-pass (the verbatim scripted judge), grounded, two-pass and the matcher, through HTTP."""
    subset = tmp_path / "labels.jsonl"  # every fourth label keeps all kinds and stays fast
    subset.write_text("\n".join(labels.LABELS.read_text().splitlines()[::4]) + "\n")
    argv = ["--judge", "openai_compatible", "--data-dir", str(data_dir), "--cache", str(tmp_path / "c.sqlite"),
            "--labels", str(subset),
            "--override", f"judge.base_url={scripted.base_url}", "judge.model=scripted-judge",
            "--json", str(tmp_path / "n.json")]
    assert judge_check.main(argv) == 0
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1].startswith("deterministic matcher accuracy: ")
    numbers = json.loads((tmp_path / "n.json").read_text())["overall"]
    assert set(numbers) == set(labels.CONFIGS)
    assert all(m["judge_failed"] == 0 for m in numbers.values())
    # the verbatim scripted judge never credits a paraphrase, so it cannot beat the labels' ceiling
    assert numbers["raw"]["accuracy"] < 1.0 and numbers["two_pass"]["n_credits"] == numbers["raw"]["n_credits"]
    assert scripted.count("/v1/chat/completions") >= len(subset.read_text().splitlines())
