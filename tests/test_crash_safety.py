"""Crash safety: torn tails, durable usage, folder locks, and the kill/fault soak at CI size."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT, scripted_overrides

from memeval.evaluation.runs.folder import JsonlAppender, read_jsonl_file
from memeval.evaluation.runs.locking import FolderBusyError, FolderLock
from memeval.model_access.usage import Price, UsageLedger, stage, usage_from_journal


# -- torn tails ---------------------------------------------------------------------------------
def test_torn_last_line_is_reported_dropped_and_cut_off(tmp_path, caplog) -> None:
    path = tmp_path / "predictions.jsonl"
    rows = [{"question_id": f"q{i}", "answer": "x" * 50} for i in range(3)]
    whole = "".join(json.dumps(r) + "\n" for r in rows)
    path.write_text(whole + json.dumps({"question_id": "q3", "answer": "y" * 80})[:40])
    with caplog.at_level(logging.WARNING):
        assert read_jsonl_file(path) == rows
    assert "torn last line" in caplog.text and str(path) in caplog.text
    assert path.read_text() == whole, "the torn bytes are cut off the file"
    out = JsonlAppender(path)  # appending after a repair never glues onto a fragment
    out.add({"question_id": "q3"})
    out.close()
    assert [r["question_id"] for r in read_jsonl_file(path)] == ["q0", "q1", "q2", "q3"]


def test_complete_last_line_without_newline_is_kept(tmp_path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}')
    assert read_jsonl_file(path) == [{"a": 1}, {"a": 2}]
    assert path.read_text() == '{"a": 1}\n{"a": 2}\n'


def test_corruption_before_the_last_line_is_an_error_naming_the_line(tmp_path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text('{"a": 1}\n{"a": \n{"a": 3}\n')
    with pytest.raises(ValueError, match=r"line 2 is not valid JSON.*delete it"):
        read_jsonl_file(path)


def test_appender_writes_whole_lines_from_many_threads(tmp_path) -> None:
    path = tmp_path / "p.jsonl"
    out = JsonlAppender(path)
    big = "z" * 200_000  # larger than any pipe or stdio buffer

    def write(i: int) -> None:
        for j in range(20):
            out.add({"i": i, "j": j, "text": big})

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.close()
    rows = read_jsonl_file(path)
    assert len(rows) == 80 and all(r["text"] == big for r in rows)


# -- durable usage --------------------------------------------------------------------------------
def test_usage_journal_keeps_a_killed_invocations_cost(tmp_path) -> None:
    journal = tmp_path / "usage.jsonl"
    prices = {"m": Price(input=2.0, output=8.0)}
    first = UsageLedger(prices=prices, price_table_version="t1")
    first.attach_journal(journal, "inv-1")
    with stage("answer"):
        first.record("m", 1000, 100, cached=False)
        first.record("m", 1000, 100, cached=False)
    # killed here: close_journal never runs, nothing else is written
    second = UsageLedger(prices=prices, price_table_version="t1")
    second.attach_journal(journal, "inv-2")
    with stage("answer"):
        second.record("m", 1000, 100, cached=True)
        second.record("m", 1000, 100, cached=True)
        second.record("m", 500, 50, cached=False)
    second.close_journal()
    usage = usage_from_journal(journal, "inv-2", "t1", prices)
    assert usage["stages"] == second.summary()["stages"], "this invocation: the ledger's own summary"
    assert usage["invocation"] == {"id": "inv-2", "finished": True}
    everything = usage["all_invocations"]
    assert everything["invocations"] == 2 and everything["interrupted"] == ["inv-1"]
    fresh = everything["totals"]["fresh"]
    assert fresh["calls"] == 3 and fresh["prompt_tokens"] == 2500
    assert fresh["cost_usd"] == pytest.approx((2500 * 2.0 + 250 * 8.0) / 1e6)
    killed = usage_from_journal(journal, "inv-1", "t1", prices)  # e.g. rebuilt after the kill
    assert killed["invocation"]["finished"] is False and killed["totals"]["fresh"]["calls"] == 2


# -- locks ----------------------------------------------------------------------------------------
def test_folder_lock_names_the_holder_and_can_wait(tmp_path) -> None:
    folder = tmp_path / "run"
    held = FolderLock(folder, "run folder").acquire()
    with pytest.raises(FolderBusyError, match=rf"run folder .* in use by another run \(pid {os.getpid()} "):
        FolderLock(folder, "run folder").acquire()
    threading.Timer(0.5, held.release).start()
    t0 = time.monotonic()
    with FolderLock(folder, "run folder", wait_s=30, poll_s=0.05):
        assert time.monotonic() - t0 >= 0.4
    FolderLock(folder).acquire().release()  # free again


def _spawn(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(ROOT / "run.py"), *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "HYDRA_FULL_ERROR": "0"})


def test_two_runs_on_one_folder_do_not_interleave(scripted, tmp_path, data_dir) -> None:
    args = ["method=embedding_rag", "dataset=epbench20", "subset.n=6", "concurrency.questions=1",
            *scripted_overrides(scripted, tmp_path, data_dir)]
    scripted.delay_s = 3.0  # the first run stays in its index/answer stages until the others have tried
    first = _spawn(args)
    runs = tmp_path / "runs" / "epbench20"
    deadline = time.monotonic() + 120
    while not any(runs.glob("embedding_rag-*/.lock")) or scripted.count() == 0:
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.1)
    busy = _spawn(args)  # fails at once, naming the holder
    other_judge = _spawn([*args, "judge.model=another-judge"])  # its own run folder, the same index folder
    waiter = _spawn([*args, "lock_wait_s=300"])  # waits its turn
    out_busy, err_busy = busy.communicate(timeout=120)
    _, err_other = other_judge.communicate(timeout=120)
    scripted.delay_s = 0.0
    out_first, err_first = first.communicate(timeout=300)
    out_wait, err_wait = waiter.communicate(timeout=300)
    assert first.returncode == 0, err_first[-3000:]
    assert busy.returncode == 2 and f"pid {first.pid}" in err_busy and "run folder" in err_busy, err_busy[-2000:]
    assert "Traceback" not in err_busy and "lock_wait_s" in err_busy
    assert other_judge.returncode == 2 and "index folder" in err_other and f"pid {first.pid}" in err_other
    assert waiter.returncode == 0, err_wait[-3000:]
    assert "new model calls this invocation: 0" in out_wait, "the waiting run found the first one's work"
    run = Path(out_first.split("run folder: ")[1].split()[0])
    assert out_wait.split("run folder: ")[1].split()[0] == str(run)
    preds = read_jsonl_file(run / "predictions.jsonl")
    assert len(preds) == 6 and len({p["question_id"] for p in preds}) == 6
    journal = [json.loads(x) for x in (run / "usage.jsonl").read_text().splitlines()]
    invs = [r["inv"] for r in journal]
    assert len(set(invs)) == 2
    switch = invs.index(invs[-1])
    assert set(invs[:switch]) == {invs[0]} and set(invs[switch:]) == {invs[-1]}, \
        "the second run's calls all come after the first run's: no interleaving"
    assert journal[switch - 1].get("event") == "end"


# -- the soaks, CI-sized ------------------------------------------------------------------------------
# GSW and Embedding RAG: LightRAG needs its own environment and a Python worker per corpus, which
# would take this past a minute; `python scripts/soak_kill.py` runs GSW + LightRAG.
@pytest.fixture(scope="module")
def reference(tmp_path_factory, data_dir):
    sys.path.insert(0, str(ROOT / "scripts"))
    from scripted_server import ScriptedServer
    from soak_kill import run_reference

    work = tmp_path_factory.mktemp("soak")
    with ScriptedServer() as server:
        yield server, run_reference(server, work, ["gsw", "embedding_rag"], 2, data_dir, say=lambda _m: None), work


def _check(report: dict) -> None:
    assert report["repaid"] == 0 and report["paid_twice_in_one_invocation"] == 0, report
    assert all(all(v.values()) for v in report["identical"].values()), report["identical"]
    journaled = sum(j["fresh_calls_all_invocations"] for j in report["usage_journal"].values())
    kept = report["answered_requests"] - report["lost_requests"]
    assert kept <= journaled <= report["answered_requests"], "every kept call journaled, none twice"


def test_kill_soak_ci_size(reference) -> None:
    """Killed 2 times at random points, resumed each time: identical outputs, nothing repaid."""
    from soak_kill import soak

    server, ref, work = reference
    report = soak(server, ref, kills=2, fault_rate=0.0, workdir=work, seed=1, say=lambda _m: None)
    assert report["kills_landed"] == 2, report
    assert report["faults_injected"] == {}
    _check(report)


def test_fault_soak_ci_size(reference) -> None:
    """20% of requests get a 429 (Retry-After), 500, timeout, dropped connection or malformed
    JSON: the same outputs, and every call answered exactly once."""
    from soak_kill import soak

    server, ref, work = reference
    report = soak(server, ref, kills=0, fault_rate=0.2, workdir=work, seed=2, say=lambda _m: None)
    assert set(report["faults_injected"]) == {"429", "500", "timeout", "drop", "malformed"}, report
    assert report["lost_in_flight"] == 0 and report["paid_units"] == report["reference_paid_units"]
    _check(report)


def test_rescore_waits_for_no_one_and_never_writes_a_busy_folder(tmp_path, capsys) -> None:
    from memeval.evaluation.rescore import main as rescore

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text("{}\n")
    with FolderLock(run, "run folder"):
        assert rescore([str(run)]) == 2
    err = capsys.readouterr().err
    assert f"pid {os.getpid()}" in err and "in use by another run" in err
    assert sorted(p.name for p in run.iterdir()) == [".lock", "config.yaml"]
