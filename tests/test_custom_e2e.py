"""The example custom dataset through run.py on the scripted server (vanilla, embedding_rag, gsw):
results table with retrieval recall, failure labels in diagnostics.jsonl (judgments untouched), rescore reproducing it, the
GSW viewer on the custom index; a malformed dataset fails before any request."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_cli, scripted_overrides

from memeval.evaluation import compare, rescore
from memeval.evaluation.retrieval_diagnostics import LABELS
from memeval.evaluation.runs.scored import load_run

EXAMPLE = ROOT / "examples" / "saltmarsh"


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _run(scripted, tmp: Path, method: str, path: Path = EXAMPLE) -> subprocess.CompletedProcess:
    args = [f"method={method}", "dataset=custom", f"dataset.path={path}", "subset.n=null",
            *scripted_overrides(scripted, tmp, tmp)]
    return run_cli(args, timeout=180)


@pytest.mark.parametrize("method", ["vanilla", "embedding_rag", "gsw", "seem"])
def test_example_through_method(scripted, tmp_path: Path, method: str) -> None:
    done = _run(scripted, tmp_path, method)
    assert done.returncode == 0, done.stderr[-3000:]
    run = Path(done.stdout.split("run folder: ")[1].split()[0])
    assert run.parent.name == "custom-saltmarsh"
    preds = _lines(run / "predictions.jsonl")
    assert len(preds) == 10 and all("context_unit_tokens" in p for p in preds)
    judg = _lines(run / "judgments.jsonl")
    assert {j["judge_prompt"] for j in judg} == {"epbench-judge-v1", "custom-text-judge-v1"}
    assert all("failure_label" not in j for j in judg)  # the score stage writes its own artifact
    diags = _lines(run / "diagnostics.jsonl")
    assert [d["question_id"] for d in diags] == [j["question_id"] for j in judg]
    assert all(d["failure_label"] in LABELS for d in diags)
    metrics = json.loads((run / "metrics.json").read_text())
    ret = metrics["retrieval"]
    assert ret["overall"]["n_with_gold"] == 8 and sum(ret["overall"]["labels"].values()) == 10
    assert set(ret["groups"]) == {"hops", "topic"} and set(metrics["strata"]) == {"hops", "topic"}
    table = (run / "results.md").read_text()
    assert "| group | n | score ± std | item F1 (P / R) | text J / token F1 | gold recall |" in table
    assert f"Retrieval diagnostics for **{method}**" in table and "context cap: 3 units" in table
    if method == "vanilla":  # the whole book: every gold unit present, all errors are generation's
        assert ret["overall"]["gold_recall"] == 1.0 and ret["overall"]["labels"]["retrieval_miss"] == 0
        assert {d["failure_label"] for d in diags} <= {"correct", "generation_miss"}
    else:
        assert all(len(p["context_chapters"]) <= 3 for p in preds)
        assert 0 < ret["overall"]["gold_recall"] < 1  # a capped retriever misses some gold units
        assert 0 < ret["overall"]["gold_token_share"] < 1
    if method == "embedding_rag":
        files = ("metrics.json", "results.md", "judgments.jsonl", "diagnostics.jsonl")
        before = [(run / f).read_text() for f in files]
        (run / "metrics.json").unlink()
        (run / "diagnostics.jsonl").unlink()
        assert rescore.main([str(run)]) == 0
        assert [(run / f).read_text() for f in files] == before
        table = compare.comparison_table([load_run(run)])
        assert "| gold recall | correct / gen. / partial / retr. miss |" in table
        labels = metrics["retrieval"]["overall"]["labels"]
        assert " / ".join(str(labels[k]) for k in LABELS[:4]) in table
    if method == "gsw":  # "what does GSW believe about Ilse Maren", across the custom index
        shown = subprocess.run([sys.executable, "-m", "memeval", "audit", "gsw-render", str(run), "--entity", "Ilse Maren"],
                               capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert shown.returncode == 0, shown.stderr
        assert "chapters/5.json" in shown.stdout and "Gannet Rock" in shown.stdout
        missing = subprocess.run([sys.executable, "-m", "memeval", "audit", "gsw-render", str(run), "--entity", "Nobody Here"],
                                 capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert missing.returncode == 1 and "no entity named" in missing.stderr


def _set(rows: list[dict], i: int, **kv: object) -> None:
    rows[i].update(kv)


# (file, 1-based line, how to break it, the expected "FILE:LINE: ..." message after the folder)
BROKEN = {
    "missing field": ("units.jsonl", 2, lambda r: r[1].pop("text"), "units.jsonl:2: field 'text': missing"),
    "duplicate id": ("questions.jsonl", 5, lambda r: _set(r, 4, id="q2"),
                     "questions.jsonl:5: field 'id': duplicate question id 'q2' (first on line 2)"),
    "unknown unit": ("questions.jsonl", 4, lambda r: _set(r, 3, gold_units=["1", "99"]),
                     "questions.jsonl:4: field 'gold_units': unknown unit id(s) '99'"),
    "non-UTF-8": ("units.jsonl", 6, None, "units.jsonl:6: not valid UTF-8 (byte 0xff"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_malformed_dataset_fails_before_any_request(scripted, tmp_path: Path, case: str) -> None:
    fname, _, edit, expected = BROKEN[case]
    d = tmp_path / "bad"
    shutil.copytree(EXAMPLE, d)
    if edit is None:
        raw = (d / fname).read_bytes().split(b"\n")
        raw[5] = raw[5].replace(b"noon", b"no\xffon")
        (d / fname).write_bytes(b"\n".join(raw))
    else:
        rows = _lines(d / fname)
        edit(rows)
        (d / fname).write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = _run(scripted, tmp_path, "embedding_rag", d)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"{d}/{expected}" in done.stderr
    assert scripted.count() == 0 and not (tmp_path / "runs").exists()  # no model call, no run folder


def test_missing_path_is_a_plain_error(scripted, tmp_path: Path) -> None:
    done = run_cli(["method=vanilla", "dataset=custom", *scripted_overrides(scripted, tmp_path, tmp_path)], timeout=60)
    assert done.returncode == 2 and "error: dataset=custom needs the folder of your data: dataset.path=DIR" in done.stderr
    assert scripted.count() == 0


def test_vanilla_cut_to_the_window_fails_health(scripted, tmp_path: Path) -> None:
    # LongMemEval's oracle on the local 16k slots: Vanilla cut 2 of 12 haystacks to fit and its run
    # passed every check. A window smaller than the example's five units does the same here.
    args = ["method=vanilla", "dataset=custom", f"dataset.path={EXAMPLE}", "subset.n=null",
            *scripted_overrides(scripted, tmp_path, tmp_path), "llm.context_window=600", "llm.max_tokens=128"]
    done = run_cli(args, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    run = Path(done.stdout.split("run folder: ")[1].split()[0])
    preds = _lines(run / "predictions.jsonl")
    assert all(p["retrieval"]["truncated"] and p["retrieval"]["dropped_units"] for p in preds)
    checks = {c["name"]: c for c in json.loads((run / "health.json").read_text())["checks"]}
    cut = checks["truncated"]
    assert cut["status"] == "fail" and cut["value"] == 1.0, cut
    assert "10 of 10 (100%) contexts cut to fit the answering model's window" in cut["message"]
    assert "units dropped" in cut["message"]
    whole = _run(scripted, tmp_path / "whole", "vanilla")  # the default window holds the example
    run = Path(whole.stdout.split("run folder: ")[1].split()[0])
    checks = {c["name"]: c for c in json.loads((run / "health.json").read_text())["checks"]}
    assert (checks["truncated"]["status"], checks["truncated"]["value"]) == ("ok", 0.0)
