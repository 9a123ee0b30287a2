"""Protocols present themselves: a family made up here reaches the report, compare and tracking
through its declared presentation alone, and run folders scored before metrics.json carried the
block still read (and still replay byte for byte, the block aside)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import v1_bundle
from omegaconf import OmegaConf

from memeval.datasets.types import Dataset, Question
from memeval.evaluation.compare import main as compare_main
from memeval.evaluation.conversations.locomo import LoCoMoProtocol
from memeval.evaluation.presentation import Column, Presentation, ReportTable
from memeval.evaluation.protocol import Protocol
from memeval.evaluation.report import build_report
from memeval.evaluation.runs.folder import RunFolder
from memeval.evaluation.runs.presentation import presentation_for
from memeval.evaluation.runs.scored import load_run
from memeval.evaluation.runs.scoring import saved_metrics_text, score_run
from memeval.harness.tracking import group_tables

ROOT = Path(__file__).resolve().parents[1]
LOCOMO = v1_bundle("locomo-local") / "runs" / "locomo"  # the v1 bundle's runs (tests/fixtures/v1_bundles)

QUIZ = Presentation(
    headline="overall.hits", label="hit rate", groups="by_level", group_label="level", group_field="level",
    group_order=("easy", "medium", "hard"), stats=("hits",), question_score="hit",
    tables=(ReportTable("Quiz hit rate by level", "by_row",
                        columns=(Column("n", "n", "count"), Column("hit rate ± std", "hits"),
                                 Column("answer words", "words", "value")),
                        summary=(Column("hardest level's rate", "hardest", "value"),),
                        notes=("Quiz: a family no reader knows.",)),
            ReportTable("Quiz by level, wide", "by_column", group_cell=Column("overall hits", "hits"),
                        columns=(Column("questions", "overall.n", "count"),))))


class QuizProtocol(Protocol):
    """A made-up benchmark family: one hit (0/1) per question, grouped by level."""

    name = "quiz"

    def answer_messages(self, question: Question, context_text: str) -> list[dict[str, str]]:
        return [{"role": "user", "content": f"{context_text}\n{question.text}"}]

    async def judge(self, question: Question, prediction: dict[str, Any], dataset: Dataset,
                    judge: Any) -> dict[str, Any]:
        return {"question_id": question.id, "hit": int(prediction["answer"] == question.gold[0])}

    @staticmethod
    def _agg(rows: list[dict[str, Any]]) -> dict[str, Any]:
        hits = [r["hit"] for r in rows]
        return {"hits": sum(hits) / len(hits), "hits_std": 0.125, "n": len(rows),
                "words": sum(r["words"] for r in rows) / len(rows)}

    def metrics(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]]) -> dict[str, Any]:
        hit = {j["question_id"]: j["hit"] for j in judgments}
        rows = [{"hit": hit[p["question_id"]], "level": p["level"], "words": len(p["answer"].split())}
                for p in predictions]
        levels = {lv: self._agg([r for r in rows if r["level"] == lv]) for lv in ("hard", "easy")
                  if any(r["level"] == lv for r in rows)}
        return {"overall": self._agg(rows), "by_level": levels, "hardest": levels.get("hard", {}).get("hits")}

    def table(self, metrics: dict[str, Any], meta: dict[str, Any]) -> str:
        return f"quiz: {metrics['overall']['hits']}\n"

    def presentation(self) -> Presentation:
        return QUIZ


def quiz_run(root: Path, method: str, hits: list[int]) -> Path:
    """A scored run folder of the quiz family (its config names the protocol class above)."""
    folder = RunFolder(root / "quiz" / f"{method}-0123456789")
    target = f"{QuizProtocol.__module__}.{QuizProtocol.__qualname__}"
    (folder / "config.yaml").write_text(OmegaConf.to_yaml({"dataset": {"protocol": {"_target_": target}}}))
    folder.write_json("meta.json", {"method": method, "dataset": "quiz", "answer_model": "scripted-llm",
                                    "judge_model": "scripted-judge", "data_version": "quiz-1",
                                    "subset": "all", "context_cap": "3 units", "protocol": {"protocol": "quiz"}})
    levels = ["easy", "easy", "hard", "hard"]
    folder.write_jsonl("predictions.jsonl", [
        {"question_id": f"q{i}", "level": lv, "answer": "yes" if h else "no idea at all", "context_tokens": 10 * (i + 1),
         "gold_units": ["u1"], "context_chapters": ["u1"] if h else []} for i, (lv, h) in enumerate(zip(levels, hits, strict=True))])
    folder.write_jsonl("judgments.jsonl", [{"question_id": f"q{i}", "hit": h} for i, h in enumerate(hits)])
    score_run(folder, QuizProtocol())
    return folder.root


def test_a_made_up_family_reaches_report_compare_and_tracking(tmp_path: Path, capsys) -> None:
    weak, strong = quiz_run(tmp_path, "weak", [1, 0, 0, 0]), quiz_run(tmp_path, "strong", [1, 1, 1, 0])
    metrics = json.loads((weak / "metrics.json").read_text())
    assert Presentation.from_dict(metrics["presentation"]) == QUIZ  # the score stage wrote the block

    md, _ = build_report([weak, strong], tmp_path / "rep", reference=weak)
    text = md.read_text()
    by_row = text.split("### Quiz hit rate by level")[1].split("###")[0]
    assert "| method | level | n | hit rate ± std | answer words |" in by_row
    assert "| strong | hard | 2 | 0.500 ± 0.125 | 2.500 |" in by_row  # groups as metrics list them
    assert "| weak | overall | 4 | 0.250 ± 0.125 | 3.250 |" in by_row
    assert "| weak | hardest level's rate |  | 0.000 |  |" in by_row  # under the headline's column
    assert "Quiz: a family no reader knows." in by_row
    wide = text.split("### Quiz by level, wide")[1].split("###")[0]
    assert "| method | overall hits | easy | medium | hard | questions |" in wide  # the declared order, all of it
    assert "| strong | 0.750 ± 0.125 | 1.000 ± 0.125 | – | 0.500 ± 0.125 | 4 |" in wide
    paired = text.split("Paired differences in per-question hit rate against weak")[1]
    row = next(r for r in paired.splitlines() if r.startswith("| strong"))
    assert row.split(" | ")[4] == "+0.500", row  # question_scores read the declared "hit" key

    assert compare_main([str(weak), str(strong), "--reference", str(weak)]) == 0
    out = capsys.readouterr().out
    assert "Metric: hits ± bootstrap std" in out and "| method | overall | easy | hard |" in out
    assert "| strong | 0.750 ± 0.125 | 1.000 ± 0.125 | 0.500 ± 0.125 |" in out
    assert "| strong | 4 | +0.500 |" in out

    (label, cols, rows), = group_tables(metrics, QUIZ).values()
    assert label == "level" and cols[:2] == ["level", "hits"] and [r[0] for r in rows] == ["hard", "easy"]

    # the block alone is read: with its protocol class gone, the tables still come out the same
    for run in (weak, strong):
        (run / "config.yaml").write_text(OmegaConf.to_yaml({"dataset": {"protocol": {"_target_": "no.such.Protocol"}}}))
    md, _ = build_report([weak, strong], tmp_path / "rep2")
    assert by_row in md.read_text()


def test_without_a_declared_key_question_scores_must_be_computed() -> None:
    class Computed(QuizProtocol):
        def presentation(self) -> Presentation:
            return Presentation(headline="overall.hits", label="hit rate")

    with pytest.raises(NotImplementedError, match="override question_scores"):
        Computed().question_scores([{"question_id": "q0", "hit": 1}], [])


def test_presentation_round_trips_and_refuses_unknown_keys() -> None:
    for p in (QUIZ, LoCoMoProtocol().presentation()):
        assert Presentation.from_dict(json.loads(json.dumps(p.to_dict()))) == p
    with pytest.raises(ValueError, match="does not know"):
        Presentation.from_dict({**QUIZ.to_dict(), "colour": "red"})
    with pytest.raises(ValueError, match="key path"):
        Presentation(headline="f1", label="F1")
    with pytest.raises(ValueError, match="cell must be one of"):
        Column("x", "x", "sparkline")


@pytest.fixture()
def old_locomo(tmp_path: Path) -> list[Path]:
    """Two v1 LoCoMo run folders, copied: scored before metrics.json carried the block."""
    runs = sorted(LOCOMO.glob("*-*"))
    out = []
    for src in (next(r for r in runs if r.name.startswith("vanilla-")),
                next(r for r in runs if r.name.startswith("embedding_rag-"))):
        dst = tmp_path / "locomo" / src.name
        shutil.copytree(src, dst)
        out.append(dst)
    return out


def test_old_run_folders_without_the_block_still_read(old_locomo: list[Path], tmp_path: Path, capsys) -> None:
    vanilla, rag = old_locomo
    metrics = json.loads((vanilla / "metrics.json").read_text())
    assert "presentation" not in metrics
    assert presentation_for(metrics, vanilla) == LoCoMoProtocol().presentation() == load_run(vanilla).presentation
    md, _ = build_report([vanilla, rag], tmp_path / "rep", reference=vanilla)
    text = md.read_text()
    assert "### LoCoMo per category" in text and "| method | category | n | F1 ± std | BLEU-1 ± std | J ± std |" in text
    assert "| vanilla | temporal |" in text and "Paired differences in per-question J against vanilla" in text
    assert compare_main([str(vanilla), str(rag)]) == 0
    assert "Metric: judge ± bootstrap std" in capsys.readouterr().out


def test_rescoring_an_old_folder_gives_its_upgraded_reading(old_locomo: list[Path]) -> None:
    """What bundle verify compares: the saved metrics.json as the upgrade module reads it (the
    block added, the judge version named), byte for byte."""
    vanilla = old_locomo[0]
    expected = saved_metrics_text(RunFolder(vanilla))
    assert expected != (vanilla / "metrics.json").read_text()  # the block was added
    score_run(RunFolder(vanilla))
    assert (vanilla / "metrics.json").read_text() == expected
    assert saved_metrics_text(RunFolder(vanilla)) == expected  # reading an upgraded file again: the same
