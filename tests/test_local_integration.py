"""The harness against the real llama.cpp server and local embedder (small subset).

Skipped where the local parts are not set up (`bash scripts/setup.sh --local`); CI sets them up.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from memeval.model_access.local_server import running_llama_servers


def _local_ready() -> str | None:
    try:
        from memeval.model_access.local_embedder import SentenceTransformerEmbedder
        from memeval.model_access.local_models import gguf_path
        from memeval.model_access.local_server import find_llama_server

        find_llama_server()
        gguf_path("qwen2.5-coder-0.5b")
        SentenceTransformerEmbedder().check_ready()
    except Exception as exc:  # noqa: BLE001 - any missing part means "not set up"
        return str(exc)
    return None


pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(_local_ready() is not None, reason=f"local parts not set up: {_local_ready()}")]


def _local_args(tmp: Path, data_dir: Path) -> list[str]:
    return ["method=embedding_rag", "dataset=epbench20", "llm=local_small", "judge=local_small",
            "embedder=local", "subset.n=3", "tracking=none", f"data_dir={data_dir}",
            f"output_root={tmp / 'runs'}", f"cache_path={tmp / 'cache.sqlite'}"]


def _servers() -> list[int]:
    return running_llama_servers()


def test_local_run_end_to_end_then_free_rerun(tmp_path, data_dir) -> None:
    before = set(_servers())
    args = _local_args(tmp_path, data_dir)
    first = run_cli(args, timeout=1500)
    assert first.returncode == 0, first.stderr[-3000:]
    run = next((tmp_path / "runs" / "epbench20").glob("embedding_rag-*"))
    preds = [json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines()]
    assert len(preds) == 3 and all(p["answer"].strip() for p in preds)
    assert all(p["usage"]["answer"]["prompt_tokens"] > 0 for p in preds)
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["overall"]["n"] + metrics["n_judge_failed"] == 3
    assert "qwen2.5-coder-0.5b-instruct" in (run / "results.md").read_text()
    assert set(_servers()) <= before, "the run left a llama-server behind"

    second = run_cli(args, timeout=600)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "new model calls this invocation: 0" in second.stdout
    usage = json.loads((run / "usage.json").read_text())
    assert usage["totals"]["fresh"]["calls"] == 0


def _servers_of(root: int) -> set[int]:
    """Live llama-servers descended from process `root`: the run's own, never a server another
    test started or is still shutting down (a snapshot of all servers races with those)."""
    out = set()
    for pid in _servers():
        p = pid
        while p > 1:
            try:
                p = int(Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                break
            if p == root:
                out.add(pid)
                break
    return out


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_killed_run_leaves_no_server(tmp_path, data_dir, sig) -> None:
    proc = subprocess.Popen([sys.executable, str(ROOT / "run.py"), *_local_args(tmp_path, data_dir)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ})
    try:
        deadline = time.monotonic() + 300
        owned: set[int] = set()
        while time.monotonic() < deadline and not owned and proc.poll() is None:
            owned = _servers_of(proc.pid)
            time.sleep(0.5)
        assert owned, f"the run's server never started (run exit code {proc.poll()})"
        time.sleep(2)
        proc.send_signal(sig)
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and running_llama_servers(owned):
            time.sleep(0.5)
        assert not running_llama_servers(owned), f"llama-server survived {sig.name} of its parent"
    finally:
        if proc.poll() is None:  # a failed assertion must not leave the run (and its server) behind
            proc.kill()
            proc.wait(timeout=60)
