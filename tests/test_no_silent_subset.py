"""No silent subset: a run and an estimate answer every question unless asked (subset.n: null);
the quick 8-question main job is an explicit preset, and every table and estimate header says
how many of how many questions it counts."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT, scripted_overrides

from memeval.evaluation.protocol import provenance_header, questions_text
from memeval.harness.estimate import compose, estimate, format_estimate

EXAMPLE = ROOT / "examples" / "saltmarsh"


def test_every_question_unless_a_preset_or_subset_n_asks() -> None:
    assert compose([]).subset.n is None
    assert compose(["+preset=quick"]).subset.n == 8
    assert compose(["+preset=full"]).subset.n == 12
    assert compose(["+preset=quick", "subset.n=3"]).subset.n == 3


def test_a_custom_dataset_runs_every_question_by_default(tmp_path: Path) -> None:
    from memeval.harness.build import build

    cfg = compose(["dataset=custom", f"dataset.path={EXAMPLE}", "method=vanilla", f"output_root={tmp_path}",
                   f"cache_path={tmp_path / 'c.sqlite'}"])
    c = build(cfg, check=False)
    c.cache.close()
    total = len([line for line in (EXAMPLE / "questions.jsonl").read_text().splitlines() if line.strip()])
    assert len(c.questions) == total > 8 and c.subset_label == "all"


@pytest.mark.parametrize(("label", "n", "shown"), [
    ("8 of 105 (stratified by bucket, seed 0)", 8, "8 of 105 questions (stratified by bucket, seed 0)"),
    ("all", 105, "105 of 105 questions (all)"),
    ("all 50 of 105; gold units within the first 40", 50, "50 of 105 questions; gold units within the first 40"),
    ("12 of 105 chosen by id (subset.ids)", 12, "12 of 105 questions chosen by id (subset.ids)"),
])
def test_the_table_header_says_n_of_n_questions(label: str, n: int, shown: str) -> None:
    header = provenance_header({"data_version": "d@1", "subset": label, "n_questions": n,
                                "answer_model": "m", "judge_model": "j", "context_cap": "3 units"}, "lenient")
    assert f"- data: d@1; {shown}; context cap: 3 units" in header
    assert questions_text(label, n) == shown


def test_the_estimate_header_says_n_of_n_questions(scripted, tmp_path: Path, data_dir: Path) -> None:
    e = estimate(compose(["method=vanilla", "dataset=epbench20", "subset.n=4",
                          *scripted_overrides(scripted, tmp_path, data_dir)]))
    assert scripted.count() == 0
    first = format_estimate(e).splitlines()[0]
    assert first == "estimate: vanilla on epbench20, 4 of 456 questions (stratified by bucket, seed 0)"
    every = estimate(compose(["method=vanilla", "dataset=custom", f"dataset.path={EXAMPLE}",
                              *scripted_overrides(scripted, tmp_path, data_dir)]))
    n = every["questions"]
    assert format_estimate(every).splitlines()[0].endswith(f", {n} of {n} questions (all)") and n > 8
