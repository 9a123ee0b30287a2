"""Imported answers judged by their own published verdicts (`memeval import-answers --verdicts
published`): no judge call, grounding applied as to any judge's verdict, the source's judge named;
and `memeval label-check`, each credit against hand labels of the same answers."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from memeval.cli.import_answers import main as import_main
from memeval.datasets.answers_file import AnswerRow, write_answers
from memeval.datasets.locomo import LoCoMoLoader
from memeval.evaluation.conversations.locomo import published_majority
from memeval.evaluation.label_check import check, rates

HEADER: dict[str, Any] = {
    "name": "elsewhere", "system": "Elsewhere Memory", "answering_model": "remote-model-x",
    "source": {"url": "https://example.invalid/elsewhere"}, "licence": "CC0", "dataset": "locomo",
    "judge": {"model": "their judge (3 runs)", "verdict": "3 booleans", "aggregate": "mean of runs"},
}


@pytest.mark.parametrize(("verdict", "expected"), [
    (True, 1), (False, 0), (1.0, 1), (0.0, 0), (0.5, 1), ([True, False, True], 1), ([True, False, False], 0),
    ([True, False], 0), ([1, 1, 0], 1), (None, None), ([], None), ("yes", None)])
def test_published_majority(verdict: Any, expected: int | None) -> None:
    assert published_majority(verdict) == expected


@pytest.fixture()
def imported_run(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[Any]]:
    """Twelve conv-30 answers (half the gold itself, half a wrong claim), every one published CORRECT."""
    qs = [q for q in LoCoMoLoader(str(data_dir), conversations=["conv-30"]).load().questions
          if q.attrs["category"] != 5][:12]
    rows = [AnswerRow(q.id, q.gold[0] if i % 2 == 0 else "A purple umbrella from Lisbon.",
                      published_verdict=[True, True, False]) for i, q in enumerate(qs)]
    path = tmp_path / "answers.jsonl"
    write_answers(path, HEADER, rows)
    monkeypatch.setenv("MEMEVAL_HOME", str(tmp_path / "home"))
    argv = [str(path), "--verdicts", "published", f"output_root={tmp_path / 'runs'}", f"data_dir={data_dir}",
            "tracking=none", f"cache_path={tmp_path / 'calls.sqlite'}"]
    assert import_main(argv) == 0
    (run,) = sorted((tmp_path / "runs" / "locomo").glob("elsewhere-*"))
    return run, rows


def test_published_verdicts_are_judged_without_a_call_and_grounded(imported_run: tuple[Path, list[Any]]) -> None:
    run, rows = imported_run
    meta = json.loads((run / "meta.json").read_text())
    assert meta["judge_model"] == "their judge (3 runs)"  # the source's judge, with its spaces, not the local one
    assert meta["protocol"]["verdicts"] == "published"
    usage = json.loads((run / "usage.json").read_text())
    assert usage["totals"]["fresh"]["calls"] == 0
    lines = [json.loads(x) for x in (run / "judgments.jsonl").read_text().splitlines()]
    assert all(j["correct"] == 1 and j["judge_prompt"] == "published-verdict" for j in lines)
    by_answer = {r.question_id: r.answer for r in rows}
    wrong = [j for j in lines if by_answer[j["question_id"]].startswith("A purple umbrella")]
    # the published judge accepted the invented answers; grounding withdraws every one of them
    assert wrong and all(j["correct_grounded"] == 0 for j in wrong)
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["credit"] == "grounded" and metrics["overall"]["judge_raw"] == 1.0
    assert metrics["overall"]["judge_grounded"] <= 0.5
    assert "the answers' own published verdicts" in (run / "results.md").read_text()


def test_label_check_rates_each_credit(imported_run: tuple[Path, list[Any]]) -> None:
    run, rows = imported_run
    labels = [{"system": "elsewhere", "question_id": r.question_id, "sample": "random",
               "correct": int(not r.answer.startswith("A purple umbrella"))} for r in rows]
    got = {r["credit"]: r for r in check([run], labels, sample="random")}
    judge, both = got["judge"], got["judge AND grounding"]
    assert judge["n"] == 12 and judge["false_accept"] == 1.0 and judge["false_reject"] == 0.0  # accepts everything
    assert both["false_accept"] == 0.0  # grounding refuses the invented answers
    assert both["accuracy"] > judge["accuracy"]


def test_rates_count_false_accepts_and_rejects() -> None:
    r = rates([(1, 1), (1, 0), (0, 1), (0, 0), (0, 0)])
    assert r["accuracy"] == pytest.approx(0.6)
    assert r["false_accept"] == pytest.approx(1 / 3) and r["false_reject"] == pytest.approx(0.5)


def test_published_verdicts_need_a_judge_and_locomo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "a.jsonl"
    write_answers(path, {k: v for k, v in HEADER.items() if k != "judge"},
                  [AnswerRow("conv-30-q0", "x")])
    assert import_main([str(path), "--verdicts", "published"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "names no judge" in err and len(err.splitlines()) == 1
    write_answers(path, {**HEADER, "dataset": "longmemeval_oracle"}, [AnswerRow("q1", "x", published_verdict=True)])
    assert import_main([str(path), "--verdicts", "published"]) == 2
    assert "'longmemeval_oracle' reads no published verdicts" in capsys.readouterr().err


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))


def test_imported_run_health_measures_no_context_and_no_prompt_copy(imported_run: tuple[Path, list[Any]]) -> None:
    from memeval.evaluation.runs.health_file import NOT_MEASURED, load_thresholds
    from memeval.harness.health import run_health

    run, _ = imported_run
    checks = {c.name: c for c in run_health(run, load_thresholds(None)).checks}
    context = [c for c in checks.values() if c.scope == "context"]
    assert context and all(c.status == NOT_MEASURED for c in context)  # no context was published
    assert "imported without the contexts" in checks["empty_contexts"].message
    assert checks["prompt_example_answers"].status == NOT_MEASURED  # the shared prompt was never sent
    assert checks["refusals"].status != NOT_MEASURED  # the answers themselves are still read


def test_imported_run_replays_from_its_own_copy(imported_run: tuple[Path, list[Any]], tmp_path: Path) -> None:
    """A bundle ships the run folder: its copy of the answers file, not the original path, feeds the replay."""
    from memeval.cli.bundle.rerun import rerun
    from memeval.methods.imported import RUN_COPY

    run, _ = imported_run
    assert (run / RUN_COPY).exists()
    original = Path(json.loads((run / "meta.json").read_text())["imported"]["answers_file"])
    original.rename(original.with_suffix(".moved"))  # the import's file is gone, as on another machine
    res = rerun(run, tmp_path / "replay", tmp_path / "empty.sqlite", "sqlite")
    assert res.ok, res.problems()
    assert not res.keys  # published verdicts: no model call to replay
    assert res.out_dir is not None and res.out_dir.name == run.name  # where the file lives is not the run's identity
    import lzma  # a bundle packs a large copy (NAME.jsonl.xz): the replay unpacks it, byte for byte
    packed = run / (RUN_COPY + ".xz")
    packed.write_bytes(lzma.compress((run / RUN_COPY).read_bytes()))
    (run / RUN_COPY).unlink()
    res = rerun(run, tmp_path / "replay2", tmp_path / "empty.sqlite", "sqlite")
    assert res.ok, res.problems()


def test_published_table_pairs_each_system_with_its_answerers_full_context(imported_run: tuple[Path, list[Any]],
                                                                          tmp_path: Path, data_dir: Path) -> None:
    from memeval.evaluation.report.imported import model_family, published_table
    from memeval.evaluation.runs.scored import load_runs

    run, rows = imported_run
    base = tmp_path / "fc.jsonl"
    write_answers(base, {**HEADER, "name": "fc-x", "system": "full context", "role": "full-context baseline",
                         "answering_model": "remote-model-x-2025-01-31"},
                  [AnswerRow(r.question_id, r.answer, published_verdict=True) for r in rows])
    argv = [str(base), "--verdicts", "published", f"output_root={tmp_path / 'runs2'}", f"data_dir={data_dir}",
            "tracking=none", f"cache_path={tmp_path / 'calls2.sqlite'}"]
    assert import_main(argv) == 0
    (fc,) = sorted((tmp_path / "runs2" / "locomo").glob("fc-x-*"))
    assert model_family("remote-model-x-2025-01-31") == "remote-model-x"
    table = published_table(load_runs([run, fc]))
    assert table is not None
    cells = {row[0]: row for row in table.rows}
    assert cells["fc-x"][9] == "(baseline)"
    assert cells["elsewhere"][9].startswith("vs fc-x: +0.000")  # the same answers: no difference
