"""scripts/project_mde.py: its projection at today's n agrees with the paired table's bootstrap
MDE on the shipped EpBench bundle, more questions never raise it, and a run that is not a
stratified subset is refused with the reason."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import bundled_run, v1_run

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import project_mde  # noqa: E402

from memeval.evaluation.runs.paired import paired_differences  # noqa: E402
from memeval.evaluation.runs.scored import load_runs  # noqa: E402

BUNDLE = "epbench20-local"


def test_projection_now_matches_the_bootstrap_and_falls_with_more_questions() -> None:
    reference, seem, gsw = load_runs([bundled_run(BUNDLE, m) for m in ("vanilla", "seem", "gsw")])
    table = {r.method: d["weighted"]["mde"] for r, d in paired_differences([seem, gsw], reference)}
    for run in (seem, gsw):
        diffs, weights = project_mde.per_stratum_differences(run, reference)
        now = project_mde.projected_mde(diffs, weights, {})
        assert now == pytest.approx(table[run.method], abs=0.006)
        grown = [project_mde.projected_mde(diffs, weights, {"1": k}) for k in (0, 20, 40, 80)]
        assert grown == sorted(grown, reverse=True) and grown[-1] < now - 0.01
        # a stratum whose differences never vary gains nothing from more questions
        flat = {**diffs, "0": [0.0] * len(diffs["0"])}
        assert project_mde.projected_mde(flat, weights, {"0": 40}) == project_mde.projected_mde(flat, weights, {})


def test_cli_prints_every_pair_and_refuses_bad_input(capsys, tmp_path) -> None:  # noqa: ANN001
    runs = [bundled_run(BUNDLE, m) for m in ("vanilla", "seem", "mem0")]
    assert project_mde.main([*map(str, runs), "--reference", str(runs[0]), "--add", "1:40"]) == 0
    out = capsys.readouterr().out
    assert "seem" in out and "mem0" in out and "+40 in 1" in out and "vanilla " not in out
    with pytest.raises(SystemExit):
        project_mde.main([str(runs[1]), "--reference", str(runs[0]), "--add", "one:forty"])


def test_a_run_of_every_question_has_no_weighted_difference_to_project() -> None:
    reference, seem = load_runs([v1_run("locomo-local", m) for m in ("vanilla", "seem")])
    with pytest.raises(SystemExit, match="not a stratified subset"):
        project_mde.per_stratum_differences(seem, reference)
