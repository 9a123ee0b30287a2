"""Completeness is part of a run (issue 58 items 2 and 6): a run missing questions is refused or
flagged by rescore, health, compare and report, a torn line's warning says what redoes it, and a
path that is not a run folder gets one line naming what it is and what to do.

Partial runs are made by copying a small bundled run folder into tmp_path and deleting lines.
"""

from __future__ import annotations

import json
import logging
import lzma
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, bundled_run

from memeval.cli import compare as compare_cli
from memeval.cli import health as health_cli
from memeval.cli import report as report_cli
from memeval.cli import rescore as rescore_cli
from memeval.evaluation.runs.completeness import completeness, drawn_ids
from memeval.evaluation.runs.folder import read_jsonl_file

BUNDLE, METHOD = "longmemeval-local", "embedding_rag"  # 12 questions, stratified subset.n=12 of 500


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.chdir(ROOT)  # the saved configs name data/ relative to the project
    monkeypatch.setenv("MEMEVAL_DATA", str(data_dir))


def _copy(tmp_path: Path, method: str = METHOD, name: str = "runs") -> Path:
    src = bundled_run(BUNDLE, method)
    dst = tmp_path / name / src.parent.name / src.name
    shutil.copytree(src, dst)
    for packed in dst.glob("*.xz"):  # a bundle may pack an artifact; a run being written never does
        packed.with_suffix("").write_bytes(lzma.decompress(packed.read_bytes()))
        packed.unlink()
    (dst / "health.json").unlink(missing_ok=True)
    return dst


def _keep(run: Path, name: str, n: int) -> None:
    lines = (run / name).read_text(encoding="utf-8").splitlines(keepends=True)
    (run / name).write_text("".join(lines[:n]), encoding="utf-8")


def _err_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error:")]
    assert len(err) == 1, err
    return err[0]


def test_complete_run_rescores_byte_for_byte(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _copy(tmp_path)
    before = (run / "metrics.json").read_bytes()
    assert rescore_cli.main([str(run)]) == 0
    assert (run / "metrics.json").read_bytes() == before  # no completeness field for a complete run
    assert "partial" not in capsys.readouterr().out


def test_partial_run_is_refused_with_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _copy(tmp_path)
    before = (run / "metrics.json").read_bytes()
    _keep(run, "predictions.jsonl", 7)
    assert rescore_cli.main([str(run)]) == 2
    line = _err_line(capsys)
    assert f"{run} is partial: 5 of its 12 questions are missing (5 without an answer in predictions.jsonl)" in line
    assert "rerun the same `memeval run` command" in line and f"--allow-partial {run}" in line
    assert "7 of 12 questions" in line
    assert (run / "metrics.json").read_bytes() == before  # nothing rewritten


def test_allow_partial_marks_the_metrics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _copy(tmp_path)
    _keep(run, "predictions.jsonl", 7)
    assert rescore_cli.main(["--allow-partial", str(run)]) == 0
    metrics = json.loads((run / "metrics.json").read_text())
    assert (metrics["questions_expected"], metrics["questions_scored"]) == (12, 7)
    assert "partial: 7 of 12 questions" in (run / "results.md").read_text()
    assert "partial: 7 of 12 questions" in capsys.readouterr().out


def test_missing_verdicts_count_too(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    _keep(run, "judgments.jsonl", 10)
    c = completeness(run)
    assert (c.missing, c.no_answer(), c.no_verdict(), c.n_expected) == (2, 0, 2, 12)
    assert "2 answered but without a verdict in judgments.jsonl" in c.describe()


@pytest.mark.parametrize(("bundle", "method"), [
    ("longmemeval-local", "embedding_rag"),  # stratified subset.n
    ("epbench20-local", "embedding_rag"),  # stratified with subset.extra
    ("locomo-conv30-first8-local", "embedding_rag"),  # subset.ids with index_units
])
def test_questions_drawn_again_are_the_ones_the_run_answered(bundle: str, method: str) -> None:
    run = bundled_run(bundle, method)
    answered = {r["question_id"] for r in read_jsonl_file(run / "predictions.jsonl")}
    assert drawn_ids(run) == answered


def test_health_fails_a_partial_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _copy(tmp_path)
    _keep(run, "predictions.jsonl", 7)
    assert health_cli.main([str(run)]) == 1
    checks = {c["name"]: c for c in json.loads((run / "health.json").read_text())["checks"]}
    assert checks["complete"]["status"] == "fail"
    assert "7 of 12 questions scored" in checks["complete"]["message"]
    assert len(checks["complete"]["questions"]) == 5
    assert "complete" in capsys.readouterr().out


def test_health_passes_a_complete_run(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    health_cli.main(["--no-write", str(run)])
    health_cli.main([str(run)])
    checks = {c["name"]: c for c in json.loads((run / "health.json").read_text())["checks"]}
    assert checks["complete"]["status"] == "ok" and checks["complete"]["value"] == 0


def test_compare_flags_and_does_not_pair_a_partial_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    partial, ref = _copy(tmp_path, "embedding_rag"), _copy(tmp_path, "vanilla")
    _keep(partial, "predictions.jsonl", 7)
    assert compare_cli.main([str(partial), str(ref), "--reference", str(ref)]) == 0
    out = capsys.readouterr().out
    assert "| embedding_rag (partial: 7 of 12 questions) |" in out
    assert f"Not paired: {partial} is partial: 7 of 12 questions" in out
    paired = out.split("Paired bootstrap differences")[1]
    assert "| embedding_rag |" not in paired


def test_compare_refuses_pairs_against_a_partial_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run, ref = _copy(tmp_path, "embedding_rag"), _copy(tmp_path, "vanilla")
    _keep(ref, "judgments.jsonl", 9)
    assert compare_cli.main([str(run), str(ref), "--reference", str(ref)]) == 0
    out = capsys.readouterr().out
    assert f"No paired differences: the reference {ref} is partial: 9 of 12 questions" in out
    assert "Paired bootstrap differences" not in out


def test_report_names_a_partial_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    partial, ref = _copy(tmp_path, "embedding_rag"), _copy(tmp_path, "vanilla")
    _keep(partial, "predictions.jsonl", 7)
    assert report_cli.main([str(partial), str(ref), "--out", str(tmp_path / "rep")]) == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "embedding_rag is partial: 7 of 12 questions" in md
    assert "all; partial: 7 of 12 questions" in md or "partial: 7 of 12 questions |" in md
    capsys.readouterr()
    assert report_cli.main([str(partial), str(ref), "--reference", str(ref), "--out", str(tmp_path / "r2")]) == 2
    assert "is partial: 7 of 12 questions" in capsys.readouterr().err


def test_torn_line_says_what_redoes_it(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    run = _copy(tmp_path)
    data = (run / "judgments.jsonl").read_bytes()
    (run / "judgments.jsonl").write_bytes(data[:-30])  # a kill mid-write of the last verdict
    with caplog.at_level(logging.WARNING, logger="memeval"):
        assert rescore_cli.main([str(run)]) == 2
    warning = " ".join(r.getMessage() for r in caplog.records)
    assert "no verdict until the judge stage runs again" in warning and "`memeval run`" in warning
    assert "will be redone" not in warning
    assert "1 answered but without a verdict in judgments.jsonl" in _err_line(capsys)


COMMANDS = [("report", report_cli.main), ("compare", compare_cli.main), ("rescore", rescore_cli.main),
            ("health", health_cli.main)]


@pytest.mark.parametrize(("name", "main"), COMMANDS)
def test_missing_folder(name: str, main, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "runs" / "locomo" / "nope-123"
    assert main([str(missing)]) == 2
    assert _err_line(capsys) == f"error: no such folder: {missing}"
    assert not missing.exists()  # never created by the reader


@pytest.mark.parametrize(("name", "main"), COMMANDS)
def test_bundle_folder(name: str, main, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = Path("results") / "locomo-local"
    assert main([str(bundle)]) == 2
    line = _err_line(capsys)
    assert line.startswith(f"error: {bundle} is a result bundle, not a run folder")
    if name == "rescore":
        assert "copy its folder out of the bundle" in line
    else:
        assert f"`memeval {name} {bundle}/runs/locomo/*`" in line


@pytest.mark.parametrize(("name", "main"), COMMANDS)
def test_not_a_run_folder(name: str, main, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes").mkdir()
    assert main([str(tmp_path / "notes")]) == 2
    line = _err_line(capsys)
    assert line.startswith(f"error: {tmp_path / 'notes'} is not a run folder: "
                           "a run folder")
    assert "config.yaml" in line and "metrics.json" in line


def test_folder_of_runs_names_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _copy(tmp_path)
    assert report_cli.main([str(run.parent)]) == 2
    assert f"`memeval report {run.parent}/*`" in _err_line(capsys)


def test_bundle_names_match_the_bundle_module() -> None:
    from memeval.evaluation.bundle.manifest import FORMAT, MANIFEST
    from memeval.evaluation.runs.locate import BUNDLE_FORMAT, BUNDLE_MANIFEST

    assert BUNDLE_MANIFEST == MANIFEST and FORMAT.startswith(BUNDLE_FORMAT)
