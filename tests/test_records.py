"""Typed run records (evaluation/runs/records.py): every bundled artifact is one, writing through
the model changes no byte, a malformed line is an error naming its file, line and field, and an
older layout migrates as the upgrade module reads it."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import numpy as np
import pytest
from conftest import v1_bundle, v1_run

from memeval.evaluation.runs.folder import (
    JsonlAppender,
    RunFolder,
    _num,
    json_text,
    read_jsonl_file,
)
from memeval.evaluation.runs.records import (
    Judgment,
    Meta,
    Metrics,
    Prediction,
    RecordError,
    record_for,
    upgraded_judgment,
    upgraded_metrics,
)
from memeval.evaluation.runs.upgrade import (
    RUN_FORMAT,
    artifacts_format,
    question_diagnostics,
    upgrade_meta,
    upgrade_metrics,
)

ROOT = Path(__file__).resolve().parents[1]
V1 = [r for b in ("epbench20-local", "locomo-local") for r in sorted((v1_bundle(b) / "runs").glob("*/*"))]
RUNS = sorted(p.parent for p in (ROOT / "results").glob("*/runs/*/*/meta.json")) + V1
RECORDS = ("meta.json", "metrics.json", "predictions.jsonl", "judgments.jsonl")


def _text(path: Path) -> bytes:
    packed = path.with_name(path.name + ".xz")
    return path.read_bytes() if path.exists() else lzma.decompress(packed.read_bytes())


def _as_written(name: str, text: bytes) -> bytes:
    """The file's text written back through its record, the way the run folder's writers write."""
    model = record_for(name)
    assert model is not None
    if name.endswith(".jsonl"):
        rows = [model.model_validate(json.loads(line)).model_dump() for line in text.splitlines() if line.strip()]
        return "".join(json.dumps(r, ensure_ascii=False, default=_num) + "\n" for r in rows).encode()
    return json_text(model.model_validate(json.loads(text)).model_dump()).encode()


def test_every_bundled_artifact_reads_as_its_record() -> None:
    assert len(RUNS) >= 50  # the shipped bundles and the v1 extracts
    lines = 0
    for run in RUNS:
        for name in ("meta.json", "metrics.json"):
            record_for(name).model_validate(json.loads(_text(run / name)))  # type: ignore[union-attr]
        for name in ("predictions.jsonl", "judgments.jsonl"):
            lines += len(read_jsonl_file(run / name))  # checked on read; a bad line raises
    assert lines > 40_000


@pytest.mark.parametrize("run", [V1[0], V1[-1], *(next((ROOT / "results" / b / "runs").glob("*/*"))
                                                   for b in ("epbench20-local", "locomo-published",
                                                             "longmemeval-local"))],
                         ids=lambda p: f"{p.parts[-4]}/{p.name}")
def test_writing_through_the_records_changes_no_byte(run: Path) -> None:
    for name in RECORDS:
        text = _text(run / name)
        assert _as_written(name, text) == text, name


def test_a_record_keeps_its_key_order_its_numbers_and_only_the_keys_it_holds() -> None:
    line = {"answer": "a", "bucket": "1", "question_id": "q1", "context_tokens": 3}
    assert list(Prediction.model_validate(line).model_dump()) == ["answer", "bucket", "question_id", "context_tokens"]
    metrics = {"overall": {"f1": 1}, "n_judge_failed": np.int64(2), "simple_recall": 1}  # as a protocol returns them
    dumped = Metrics.model_validate(metrics).model_dump()
    assert json_text(dumped) == json_text(metrics)  # 1 stays 1 (not 1.0), numpy's 2 is written as 2


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_line_without_question_id_names_the_file_line_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path / "predictions.jsonl", [{"question_id": "q1", "answer": "a"}, {"answer": "b"}])
    with pytest.raises(RecordError, match=r"predictions\.jsonl: line 2: field `question_id` is missing.*rerun"):
        read_jsonl_file(path)


def test_a_field_of_the_wrong_type_names_it(tmp_path: Path) -> None:
    path = _write(tmp_path / "judgments.jsonl", [{"question_id": 7, "correct": 1}])
    with pytest.raises(RecordError, match=r"judgments\.jsonl: line 1: field `question_id`: input should be a valid "
                                          r"string \(got 7\)"):
        read_jsonl_file(path)
    (tmp_path / "meta.json").write_text(json.dumps({"method": "m", "n_questions": "20"}))
    with pytest.raises(RecordError, match=r"meta\.json: field `n_questions`: should be a whole number, not str"):
        RunFolder(tmp_path).read_json("meta.json")


def test_a_malformed_line_is_refused_before_it_is_written(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    with pytest.raises(RecordError, match=r"question 'q1'.*field `context_tokens`.*answer stage writes it"):
        folder.write_jsonl("predictions.jsonl", [{"question_id": "q1", "context_tokens": "12"}])
    out = JsonlAppender(tmp_path / "judgments.jsonl")
    with pytest.raises(RecordError, match=r"a new line: field `question_id` is missing.*Protocol\.judge\(\)"):
        out.add({"judge_prompt": "v1", "correct": 1})
    out.close()
    assert (tmp_path / "judgments.jsonl").read_bytes() == b""  # nothing half-written
    folder.write_jsonl("diagnostics.jsonl", [{"any": "shape"}])  # not a typed record: as before


def test_a_format_0_judgments_line_migrates_its_diagnostics_out() -> None:
    run = v1_run("locomo-local", "vanilla")
    assert artifacts_format(json.loads((run / "meta.json").read_text())) == 0
    lines = read_jsonl_file(run / "judgments.jsonl")
    diagnostics = question_diagnostics(run)
    for saved in lines:
        line, moved = upgraded_judgment(saved, 0)
        assert "failure_label" not in line and list(line) == [k for k in saved if k not in moved]
        assert moved == diagnostics[saved["question_id"]]
        assert Judgment.model_validate(saved, context={"run_format": 1}).model_dump() == saved  # format 1: as is


def test_meta_and_metrics_migrate_as_their_format_says() -> None:
    """The upgrade module reads artifacts through these records: a format-3 run reads as written;
    a format-0 run's protocol description gains the keys its format lacked (never changing a saved
    one), and its metrics the presentation and statistics blocks the caller gives."""
    presentation = {"headline": "made.up"}
    blocks = lambda: {"statistics": {"resampling_unit": "question"}}  # noqa: E731
    for run in RUNS:
        meta = json.loads(_text(run / "meta.json"))
        metrics = json.loads(_text(run / "metrics.json"))
        fmt = artifacts_format(meta)
        read = upgrade_meta(meta)
        if fmt == RUN_FORMAT:
            assert json_text(read) == json_text(meta), run
            assert json_text(upgrade_metrics(metrics, meta, presentation, blocks)) == json_text(metrics), run
            continue
        assert fmt == 0, run
        saved, upgraded = meta["protocol"], read["protocol"]
        assert set(upgraded) > set(saved), run  # keys its format lacked, at what their absence meant
        assert all(upgraded[k] == v for k, v in saved.items()), run  # a saved key is never changed
        got = upgrade_metrics(metrics, meta, presentation, blocks)
        assert got["presentation"] == presentation and got["statistics"] == {"resampling_unit": "question"}
        assert got["provenance"]["protocol"] == upgraded, run
    old = json.loads(_text(V1[0] / "metrics.json"))
    assert "presentation" not in old and upgraded_metrics(old, 0, presentation=presentation)["presentation"] == presentation
    assert max(Meta.VERSION, Metrics.VERSION, Judgment.VERSION) <= RUN_FORMAT  # no layout newer than the format
