"""OpenAI Batch API mode against the scripted server's /v1/files and /v1/batches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from conftest import ROOT, run_cli, scripted_overrides

BATCH = ["batch.stages=[judge]", "batch.poll_s=0.1", "batch.settle_s=0.3", "concurrency.questions=50"]


def _args(server, tmp: Path, data_dir: Path, *extra: str) -> list[str]:
    return ["method=embedding_rag", "dataset=epbench20", "subset.n=4",
            *scripted_overrides(server, tmp, data_dir), *extra]


def _count(server, path: str) -> int:
    return sum(1 for r in server.requests if r["path"] == path)


def _judgments(tmp: Path) -> list[dict]:
    (run,) = (tmp / "runs" / "epbench20").glob("embedding_rag-*")
    rows = [json.loads(x) for x in (run / "judgments.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in ("judge_cached",)} for r in rows]


def test_judging_through_one_batch_matches_direct_calls_and_reruns_free(scripted, tmp_path, data_dir) -> None:
    direct = run_cli(_args(scripted, tmp_path / "direct", data_dir))
    assert direct.returncode == 0, direct.stderr[-2000:]
    before = len(scripted.requests)
    batched = run_cli(_args(scripted, tmp_path / "batch", data_dir, *BATCH))
    assert batched.returncode == 0, batched.stderr[-2000:]
    new = scripted.requests[before:]
    assert sum(r["path"] == "/v1/batches" for r in new) == 1  # all four judge calls in one batch
    assert sum(r["path"] == "batch:/v1/chat/completions" for r in new) == 4
    direct_chat = [r for r in new if r["path"] == "/v1/chat/completions"]
    assert len(direct_chat) == 4 and all("grade answers" not in json.dumps(r["body"]) for r in direct_chat)
    assert _judgments(tmp_path / "batch") == _judgments(tmp_path / "direct")

    again = len(scripted.requests)
    rerun = run_cli(_args(scripted, tmp_path / "batch", data_dir, *BATCH))
    assert rerun.returncode == 0 and len(scripted.requests) == again  # collected into the cache


def test_a_killed_run_resumes_polling_its_batch(scripted, tmp_path, data_dir) -> None:
    scripted.batch_hold = True  # the batch stays in_progress until released
    args = _args(scripted, tmp_path, data_dir, *BATCH)
    proc = subprocess.Popen([sys.executable, str(ROOT / "run.py"), *args], cwd=ROOT,
                            env={**os.environ, "HYDRA_FULL_ERROR": "0"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while _count(scripted, "/v1/batches") == 0 and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)  # at least one poll
    proc.kill()  # the run this test started
    proc.wait(timeout=30)
    assert _count(scripted, "/v1/batches") == 1
    journal = json.loads((tmp_path / "batches" / "open_batches.json").read_text())
    assert len(journal) == 1 and len(next(iter(journal.values()))["keys"]) == 4

    scripted.batch_hold = False  # the provider finishes the batch while nobody is polling
    resumed = run_cli(args)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert _count(scripted, "/v1/batches") == 1 and _count(scripted, "/v1/files") == 1  # nothing resubmitted
    assert _count(scripted, "batch:/v1/chat/completions") == 4
    assert json.loads((tmp_path / "batches" / "open_batches.json").read_text()) == {}
