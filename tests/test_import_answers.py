"""`memeval import-answers`: an answers file becomes an ordinary run folder (methods/imported.py),
which the judge and score stages and `memeval rescore` read like any run; a file that does not fit
the dataset (missing, unknown or duplicated ids, another dataset) gives one error before any model
call; any dataset the framework loads takes one (LoCoMo, LongMemEval, EpBench, custom)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, scripted_overrides

from memeval.cli.import_answers import main as import_main
from memeval.datasets.answers_file import (
    FORMAT,
    AnswerRow,
    AnswersFileError,
    read_answers,
    write_answers,
)

HEADER: dict[str, Any] = {
    "name": "elsewhere", "system": "Elsewhere Memory", "system_version": "0.1", "answering_model": "remote-model-x",
    "answer_prompt": {"name": "their prompt"}, "source": {"url": "https://example.invalid/elsewhere"},
    "licence": "CC0", "dataset": "locomo",
    "judge": {"model": "their-judge", "verdict": "true = CORRECT", "aggregate": "mean"},
}


def _overrides(scripted: Any, tmp: Path, data_dir: Path) -> list[str]:
    """The scripted judge and embedder; the answering model is the file's (llm=imported)."""
    return [o for o in scripted_overrides(scripted, tmp, data_dir) if not o.startswith("llm")]


def _locomo(data_dir: Path) -> Any:
    from memeval.datasets.locomo import LoCoMoLoader

    return LoCoMoLoader(str(data_dir)).load()


def _answers(tmp: Path, ids: list[str], header: dict[str, Any] | None = None, **kw: Any) -> Path:
    path = tmp / "answers.jsonl"
    rows = [AnswerRow(q, f"answer to {q}", published_verdict=[True, False, True], **kw) for q in ids]
    write_answers(path, header or HEADER, rows)
    return path


def _error(capsys: Any, argv: list[str]) -> str:
    assert import_main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and len(err.splitlines()) == 1, err
    return err


def test_import_judge_score_and_rescore_end_to_end(scripted, tmp_path: Path, data_dir: Path) -> None:
    data = _locomo(data_dir)
    qs = [q for q in data.questions if q.corpus_id == "conv-30"][:12]
    path = tmp_path / "answers.jsonl"
    rows = [AnswerRow(q.id, q.gold[0] if i % 2 == 0 else "I have no idea.", published_verdict=i % 2 == 0,
                      context="Session 3: something was said" if i == 0 else None, tokens={"prompt": 10, "completion": 3},
                      latency_ms=12.5)
            for i, q in enumerate(qs)]
    sha = write_answers(path, {**HEADER, "data_version": data.version}, rows)
    cmd = [sys.executable, "-m", "memeval", "import-answers", str(path), *_overrides(scripted, tmp_path, data_dir)]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    (run,) = sorted((tmp_path / "runs" / "locomo").glob("elsewhere-*"))
    preds = [json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines()]
    assert [p["question_id"] for p in preds] == [q.id for q in qs]
    assert [p["answer"] for p in preds] == [row.answer for row in rows]
    assert all(p["answered_by"] == "method" and p["usage"] == {} for p in preds)
    assert preds[0]["context_text"] == "Session 3: something was said"
    assert preds[1]["native_answer"]["published_verdict"] is False and preds[1]["native_answer"]["tokens"]["prompt"] == 10
    meta = json.loads((run / "meta.json").read_text())
    assert meta["answer_model"] == "remote-model-x" and meta["judge_model"] == "scripted-judge"
    assert meta["imported"]["answers_sha256"] == sha and meta["imported"]["system"] == "Elsewhere Memory"
    assert meta["imported"]["produced_here"] == {"index": False, "answer": False}
    assert meta["answer_with"] == "imported" and meta["n_questions"] == 12
    bodies = [json.dumps(q["body"]) for q in scripted.requests]
    assert bodies and all("scripted-judge" in b for b in bodies), "only the judge was called"
    judg = [json.loads(x) for x in (run / "judgments.jsonl").read_text().splitlines()]
    assert len(judg) == 12
    metrics = (run / "metrics.json").read_bytes()
    assert "remote-model-x" in (run / "results.md").read_text()
    usage = json.loads((run / "usage.json").read_text())
    assert "answer" not in usage["stages"] or usage["stages"]["answer"]["fresh"]["calls"] == 0
    r2 = subprocess.run([sys.executable, "-m", "memeval", "rescore", str(run)], cwd=ROOT, capture_output=True,
                        text=True, timeout=300)
    assert r2.returncode == 0, r2.stderr[-2000:]
    assert (run / "metrics.json").read_bytes() == metrics
    before = len(scripted.requests)  # the same import again: the same folder, every call cached
    r3 = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r3.returncode == 0 and "new model calls this invocation: 0" in r3.stdout
    assert len(scripted.requests) == before and sorted((tmp_path / "runs" / "locomo").glob("elsewhere-*")) == [run]
    # a replay keeps the answers file, so a replayed folder (verify --keep, then export) replays on its own
    from memeval.cli.bundle.rerun import rerun
    from memeval.model_access.cache import ResponseCache

    first = rerun(run, tmp_path / "replay1", None, None, data_dir, ResponseCache(None))
    assert first.ok, first.problems(5)
    assert (first.out_dir / "imported_answers.jsonl").read_bytes() == (run / "imported_answers.jsonl").read_bytes()
    (run / "imported_answers.jsonl").unlink()  # the first folder is gone (a bundle replaced by its export)
    second = rerun(first.out_dir, tmp_path / "replay2", None, None, data_dir, ResponseCache(None))
    assert second.ok, second.problems(5)


def test_a_changed_file_is_refused_by_the_method(tmp_path: Path) -> None:
    import asyncio

    from memeval.datasets.types import ContextCap, Question
    from memeval.methods.base import Services
    from memeval.methods.imported import ImportedAnswers

    path = _answers(tmp_path, ["conv-30-q0"])
    sha = read_answers(path).sha256
    services = Services(llm=None, embedder=None, cap=ContextCap(), store_root=tmp_path)  # type: ignore[arg-type]
    method = ImportedAnswers(services, answers_file=str(path), answers_sha256=sha)
    q = Question("conv-30-q0", "conv-30", "?", ("x",))
    index = asyncio.run(method.build_index(None))  # type: ignore[arg-type]
    assert asyncio.run(method.answer(index, q, asyncio.run(method.retrieve(index, q)))).text == "answer to conv-30-q0"
    path.write_text(path.read_text().replace("answer to", "changed"))
    with pytest.raises(Exception, match="the file changed"):
        ImportedAnswers(services, answers_file=str(path), answers_sha256=sha).answers()


@pytest.mark.parametrize("case", ["missing", "unknown", "duplicated", "wrong_dataset", "data_version", "malformed"])
def test_a_file_that_does_not_fit_gives_one_error_before_any_call(case: str, scripted, tmp_path: Path,
                                                                 data_dir: Path, capsys: Any) -> None:
    data = _locomo(data_dir)
    ids = [q.id for q in data.questions if q.corpus_id == "conv-30"][:5]
    extra: list[str] = []
    header = dict(HEADER)
    if case == "missing":
        extra = ["dataset.loader.conversations=[conv-30]"]  # the run asks for all 105 of conv-30
        want = "100 of the run's 105 questions have no answer in the file: conv-30-q"
    elif case == "unknown":
        ids = [*ids, "conv-30-q9999", "conv-99-q0"]
        want = "2 of 7 question ids are not questions of locomo: conv-30-q9999; conv-99-q0"
    elif case == "duplicated":
        path = _answers(tmp_path, ids)
        lines = path.read_text().splitlines()
        path.write_text("\n".join([*lines, lines[2], lines[3]]) + "\n")
        want = "2 question id(s) appear more than once: conv-30-q1 (lines 3, 7); conv-30-q2 (lines 4, 8)"
    elif case == "wrong_dataset":
        header["dataset"] = "longmemeval_s"
        extra = ["dataset=locomo"]
        want = "holds answers for dataset 'longmemeval_s', but the run loads 'locomo'"
    elif case == "data_version":
        header["data_version"] = "locomo10@000000000000-original"
        want = "was aligned with locomo data version 'locomo10@000000000000-original', but this machine's data is"
    else:
        path = _answers(tmp_path, ids)
        path.write_text(path.read_text() + json.dumps({"question_id": "conv-30-q9", "answer": 7}) + "\n")
        want = "1 of 6 answer lines are malformed: line 7: answer must be a string, not int"
    if case not in ("duplicated", "malformed"):
        path = _answers(tmp_path, ids, header)
    err = _error(capsys, [str(path), *_overrides(scripted, tmp_path, data_dir), *extra])
    assert want in err, err
    assert scripted.requests == [] and not (tmp_path / "runs" / "locomo").exists()


def test_header_and_rows_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"format": FORMAT, "system": "x"}) + "\n")
    with pytest.raises(AnswersFileError, match="header lacks 'answering_model'.*header lacks 'dataset'"):
        read_answers(path)
    head = {**HEADER, "format": FORMAT, "judge": None}
    path.write_text(json.dumps(head) + "\n" + json.dumps({"question_id": "a", "answer": "b", "published_verdict": True}))
    with pytest.raises(AnswersFileError, match="carry a published_verdict but the header names no judge"):
        read_answers(path)
    path.write_text(json.dumps(head) + "\n" + json.dumps({"question_id": "a", "answer": "b", "answr": "c"}))
    with pytest.raises(AnswersFileError, match=r"unknown field\(s\) \['answr'\]"):
        read_answers(path)


def _ids(cfg_dataset: list[str], data_dir: Path) -> tuple[str, list[str]]:
    from hydra.utils import instantiate

    from memeval.harness.estimate import compose

    cfg = compose([*cfg_dataset, f"data_dir={data_dir}"])
    ds = instantiate(cfg.dataset.loader).load()
    return ds.name, [q.id for q in ds.questions]


@pytest.mark.parametrize("dataset", [["dataset=epbench20"], ["dataset=longmemeval_oracle"],
                                     ["dataset=custom", f"dataset.path={ROOT / 'examples' / 'saltmarsh'}"]])
def test_any_dataset_takes_imported_answers(dataset: list[str], scripted, tmp_path: Path, data_dir: Path) -> None:
    try:
        name, ids = _ids(dataset, data_dir)
    except Exception as exc:  # noqa: BLE001 - that dataset's files are not on this machine
        pytest.skip(f"{dataset[0]}: {exc}")
    picked = ids[:3]
    path = _answers(tmp_path, picked, {**HEADER, "dataset": name})
    assert import_main([str(path), *dataset, "stages=[index,answer]", *_overrides(scripted, tmp_path, data_dir)]) == 0
    (run,) = sorted((tmp_path / "runs" / name).glob("elsewhere-*"))
    preds = [json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines()]
    assert [p["question_id"] for p in preds] == picked and scripted.requests == []
    assert json.loads((run / "meta.json").read_text())["answer_model"] == "remote-model-x"


def test_the_plugin_refuses_a_run_that_was_not_imported(tmp_path: Path) -> None:
    """method=imported chosen by hand (the local model would be named as the answerer) is refused."""
    from types import SimpleNamespace

    from memeval.datasets.types import ContextCap
    from memeval.methods.base import Services
    from memeval.methods.imported import ImportedAnswers, run_meta

    path = _answers(tmp_path, ["conv-30-q0"])
    sha = read_answers(path).sha256
    local = Services(llm=SimpleNamespace(model="qwen2.5-coder-0.5b-instruct"), embedder=None,  # type: ignore[arg-type]
                     cap=ContextCap(), store_root=tmp_path)
    with pytest.raises(Exception, match="needs method.answers_file"):
        ImportedAnswers(local)
    with pytest.raises(Exception, match="the imported answers are 'remote-model-x'"):
        ImportedAnswers(local, answers_file=str(path), answers_sha256=sha, imported={"answering_model": "remote-model-x"})
    assert run_meta({"name": "vanilla"}) == {}  # every other method's meta.json is unchanged
