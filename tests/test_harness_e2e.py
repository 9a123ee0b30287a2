"""run.py end to end against the scripted server: artifacts, zero-call reruns, clear errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import run_cli, scripted_overrides

ARTIFACTS = ("config.yaml", "meta.json", "index.json", "predictions.jsonl", "judgments.jsonl",
             "metrics.json", "usage.json", "results.md", "health.json")


def _run_dir(tmp: Path, method: str = "embedding_rag") -> Path:
    dirs = sorted((tmp / "runs" / "epbench20").glob(f"{method}-*"))
    assert len(dirs) == 1, dirs
    return dirs[0]


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_embedding_rag_run_writes_every_artifact_and_reruns_for_free(scripted, tmp_path, data_dir) -> None:
    args = ["method=embedding_rag", "dataset=epbench20", "subset.n=8",
            *scripted_overrides(scripted, tmp_path, data_dir)]
    first = run_cli(args)
    assert first.returncode == 0, first.stderr[-3000:]
    run = _run_dir(tmp_path)
    for name in ARTIFACTS:
        assert (run / name).exists(), name
    preds = _lines(run / "predictions.jsonl")
    assert len(preds) == 8
    for p in preds:
        assert {"question_id", "answer", "context_text", "context_tokens", "context_chapters", "usage"} <= set(p)
        assert 1 <= len(p["context_chapters"]) <= 3 and p["context_tokens"] > 0
        assert p["usage"]["answer"]["calls"] == 1
    judg = _lines(run / "judgments.jsonl")
    assert [j["question_id"] for j in judg] == [p["question_id"] for p in preds]
    for j in judg:
        assert len(j["matching_score"]) == len(j["gold"]) and "bucket" in j and "identified_items" in j
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["policy"] == "lenient" and metrics["overall"]["n"] == 8
    assert set(metrics["buckets"]) <= {"0", "1", "2", "3-5", "6+"}
    assert {"f1", "f1_std", "precision", "recall", "n"} <= set(metrics["overall"])
    table = (run / "results.md").read_text()
    assert "scripted-llm" in table and "scripted-judge" in table and "lenient" in table
    assert "not comparable" in table and "epbench-20@" in table

    calls = scripted.count()
    metrics_before = (run / "metrics.json").read_text()
    second = run_cli(args)
    assert second.returncode == 0, second.stderr[-3000:]
    assert scripted.count() == calls, "a rerun of a finished experiment must make no model call"
    usage = json.loads((run / "usage.json").read_text())
    assert usage["totals"]["fresh"]["calls"] == 0 and usage["totals"]["cached"]["calls"] > 0
    assert (run / "metrics.json").read_text() == metrics_before
    assert "new model calls this invocation: 0" in second.stdout

    from memeval.evaluation.rescore import main as rescore

    (run / "metrics.json").unlink()
    assert rescore([str(run)]) == 0
    assert (run / "metrics.json").read_text() == metrics_before


def test_vanilla_puts_the_whole_book_in_context(scripted, tmp_path, data_dir) -> None:
    r = run_cli(["method=vanilla", "dataset=epbench20", "subset.n=2", *scripted_overrides(scripted, tmp_path, data_dir)])
    assert r.returncode == 0, r.stderr[-3000:]
    preds = _lines(_run_dir(tmp_path, "vanilla") / "predictions.jsonl")
    assert all(len(p["context_chapters"]) == 19 and p["context_tokens"] > 9000 for p in preds)


def test_multirun_sweeps_methods(scripted, tmp_path, data_dir) -> None:
    r = run_cli(["-m", "method=vanilla,embedding_rag", "dataset=epbench20", "subset.n=2",
                 *scripted_overrides(scripted, tmp_path, data_dir)])
    assert r.returncode == 0, r.stderr[-3000:]
    assert _run_dir(tmp_path, "vanilla").exists() and _run_dir(tmp_path, "embedding_rag").exists()


def test_interrupted_run_resumes_without_repaying(scripted, tmp_path, data_dir) -> None:
    args = ["method=embedding_rag", "dataset=epbench20", "subset.n=6", "llm.max_attempts=1",
            "judge.max_attempts=1", "concurrency.questions=1", *scripted_overrides(scripted, tmp_path, data_dir)]
    scripted.fail_after = 5  # the run dies part-way through
    crashed = run_cli(args)
    assert crashed.returncode != 0
    (log,) = (tmp_path / "runs" / "epbench20").glob("embedding_rag-*/run.log")
    assert "run stopped:" in log.read_text(), "the run's own log says why it stopped"
    paid_before_crash = 5
    scripted.fail_after = None
    n0 = scripted.count()
    resumed = run_cli(args)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    repaid = scripted.count() - n0
    clean = tmp_path / "clean"
    total = run_cli(["method=embedding_rag", "dataset=epbench20", "subset.n=6",
                     *scripted_overrides(scripted, clean, data_dir)])
    assert total.returncode == 0
    total_calls = scripted.count() - n0 - repaid
    assert repaid == total_calls - paid_before_crash


def test_unknown_method_fails_with_the_options(scripted, tmp_path, data_dir) -> None:
    r = run_cli(["method=no_such_method", *scripted_overrides(scripted, tmp_path, data_dir)])
    assert r.returncode != 0 and "no_such_method" in r.stderr and "embedding_rag" in r.stderr
    assert scripted.count() == 0


def test_typo_in_override_fails_clearly(scripted, tmp_path, data_dir) -> None:
    r = run_cli(["method=embedding_rag", "method.topk=3", *scripted_overrides(scripted, tmp_path, data_dir)])
    assert r.returncode != 0 and "topk" in r.stderr
    assert scripted.count() == 0


def test_wrong_checksum_fails_before_any_call(scripted, tmp_path, data_dir) -> None:
    bad = tmp_path / "data"
    shutil.copytree(data_dir / "epbench", bad / "epbench")
    qa = next(bad.glob("epbench/*/books/*nbchapters_19_*/df_qa.parquet"))
    qa.write_bytes(qa.read_bytes() + b"x")
    args = [*scripted_overrides(scripted, tmp_path, data_dir), f"data_dir={bad}", "dataset=epbench20", "subset.n=2"]
    r = run_cli(args)
    assert r.returncode == 2 and "Checksum mismatch" in r.stderr and "fetch_data.py" in r.stderr
    assert "Traceback" not in r.stderr
    assert scripted.count() == 0


def test_missing_api_key_fails_before_any_call(scripted, tmp_path, data_dir) -> None:
    args = [*scripted_overrides(scripted, tmp_path, data_dir), "llm=gpt4o"]
    r = run_cli(args, env={"OPENAI_API_KEY": ""})
    assert r.returncode == 2 and "OPENAI_API_KEY" in r.stderr and "Traceback" not in r.stderr
    assert scripted.count() == 0


def test_secrets_never_reach_run_artifacts(scripted, tmp_path, data_dir) -> None:
    secret = "sk-test-DO-NOT-LEAK-1234567890"
    args = ["dataset=epbench20", "subset.n=2", *scripted_overrides(scripted, tmp_path, data_dir),
            "llm.api_key_env=MY_KEY", "judge.api_key_env=MY_KEY"]
    r = run_cli(args, env={"MY_KEY": secret})
    assert r.returncode == 0, r.stderr[-2000:]
    assert secret not in r.stdout + r.stderr
    files = [f for f in (tmp_path / "runs").rglob("*") if f.is_file()]
    assert files
    for f in files:
        assert secret not in f.read_text(errors="ignore"), f
    sent = [next((v for k, v in req["headers"].items() if k.lower() == "authorization"), None)
            for req in scripted.requests if req["path"].endswith("/chat/completions")]
    assert sent and all(a == f"Bearer {secret}" for a in sent), "the key was used for the calls"


def test_redaction_blanks_secret_values_but_keeps_variable_names() -> None:
    from memeval.evaluation.runs.folder import REDACTED, redact

    cfg = {"llm": {"api_key": "sk-123", "api_key_env": "OPENAI_API_KEY", "nested": [{"token": "t"}]}}
    out = redact(cfg)
    assert out["llm"]["api_key"] == REDACTED and out["llm"]["nested"][0]["token"] == REDACTED
    assert out["llm"]["api_key_env"] == "OPENAI_API_KEY"


def test_error_analysis_frame(scripted, tmp_path, data_dir) -> None:
    from memeval.evaluation.report.questions import question_frame

    r = run_cli(["method=embedding_rag", "dataset=epbench20", "subset.n=5",
                 *scripted_overrides(scripted, tmp_path, data_dir)])
    assert r.returncode == 0, r.stderr[-2000:]
    df = question_frame(_run_dir(tmp_path))
    assert len(df) == 5 and {"f1", "gold_unit_recall", "context_text", "identified_items"} <= set(df.columns)
    with_gold = df[df["gold_units"].map(len) > 0]
    for _, row in with_gold.iterrows():
        expected = len(set(row.gold_units) & set(row.context_chapters)) / len(set(row.gold_units))
        assert row.gold_unit_recall == expected


def test_wrong_type_in_override_fails_clearly(scripted, tmp_path, data_dir) -> None:
    r = run_cli(["subset.n=abc", *scripted_overrides(scripted, tmp_path, data_dir)])
    assert r.returncode != 0 and "subset.n" in r.stderr and "Integer" in r.stderr
    r = run_cli([*scripted_overrides(scripted, tmp_path, data_dir), "llm.max_tokens=lots"])
    assert r.returncode != 0 and "max_tokens" in r.stderr
    assert scripted.count() == 0
