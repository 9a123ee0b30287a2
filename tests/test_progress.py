"""Progress bars on a terminal (quiet otherwise) and a one-line Ctrl-C instead of a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from conftest import ROOT, run_cli, scripted_overrides
from scripted_server import _answer


def test_progress_shows_counts_calls_and_cost_only_when_asked(scripted, tmp_path, data_dir) -> None:
    args = ["method=embedding_rag", "dataset=epbench20", "subset.n=3", *scripted_overrides(scripted, tmp_path, data_dir)]
    quiet = run_cli(args)  # not a terminal: no bars in the log
    assert quiet.returncode == 0, quiet.stderr[-2000:]
    assert "fresh /" not in quiet.stderr
    shown = run_cli([*args, "subset.n=4"], env={"MEMEVAL_PROGRESS": "1"})
    assert shown.returncode == 0, shown.stderr[-2000:]
    for stage in ("index", "answer", "judge"):
        assert stage in shown.stderr
    assert "4/4" in shown.stderr and "cached, $0.0000" in shown.stderr and "fresh /" in shown.stderr


def test_ctrl_c_prints_one_line_and_keeps_finished_work(scripted, tmp_path, data_dir) -> None:
    def slow_answer(messages, req):
        time.sleep(0.7)
        return _answer(messages, req)

    scripted.add_rule(r"Material:", slow_answer)
    args = ["method=embedding_rag", "dataset=epbench20", "subset.n=12", "concurrency.questions=1",
            *scripted_overrides(scripted, tmp_path, data_dir)]
    proc = subprocess.Popen([sys.executable, str(ROOT / "run.py"), *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "HYDRA_FULL_ERROR": "0"})
    deadline = time.monotonic() + 60
    preds = None
    while time.monotonic() < deadline:
        found = list((tmp_path / "runs").glob("epbench20/*/predictions.jsonl"))
        if found and found[0].read_text().count("\n") >= 2:
            preds = found[0]
            break
        time.sleep(0.1)
    assert preds is not None, "no question finished"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-3000:]
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines[-1].startswith("interrupted: finished questions are saved in ") and "rerun the same command" in lines[-1]
    assert str(preds.parent) in lines[-1]
    assert preds.read_text().count("\n") >= 2  # finished work kept
