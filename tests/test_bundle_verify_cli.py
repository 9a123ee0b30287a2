"""`memeval bundle verify` on the shipped longmemeval-local bundle (4 runs): --run selects runs, a
rerun skips runs already verified, a replay shows progress lines, a missing package environment
is announced before the replay would build it, and Ctrl-C gives one line and exit 130.

Only one real replay (Vanilla: 24 cached calls, a few seconds; the replay refuses any call the
bundle does not hold, so it makes no model call); the other tests replace the replay itself.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

import memeval.cli.bundle.verify as verify_mod
from memeval.cli.bundle.command import main as bundle_main
from memeval.cli.bundle.rerun import Rerun
from memeval.cli.bundle.verify import verify_bundle
from memeval.harness.replay import Replay
from memeval.methods.external import envs
from memeval.methods.external.hipporag2 import HippoRAG2Method

BUNDLE = ROOT / "results" / "longmemeval-local"
VANILLA = "runs/longmemeval_oracle/vanilla-74db4d9ecf"
SEEM = "runs/longmemeval_oracle/seem-6a7230c560"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the bundle's configs name ./data


def _fake_rerun(replays: list[str], then: Any = None) -> Any:
    """A replay that takes no time: records which run it was asked for, then `then(dest, replay)`.
    (Tests that use it also skip loading the bundle's 3,305 calls into a scratch cache.)"""

    def fake(run: Path, work: Path, *args: Any, replay: Replay | None = None, **kw: Any) -> Rerun:
        replays.append(run.name)
        work.mkdir(parents=True, exist_ok=True)
        if then is not None:
            then(run, work, replay)
        return Rerun(run, seconds=0.1, keys=set(replay.keys) if replay else set())

    return fake


def test_run_selects_and_a_rerun_skips_what_was_verified(tmp_path: Path, capsys, monkeypatch) -> None:
    keep = tmp_path / "keep"
    rc = bundle_main(["verify", str(BUNDLE), "--run", "vanilla*", "--keep", str(keep)])
    out, err = capsys.readouterr()
    assert rc == 0, out + err
    assert f"OK   {VANILLA}" in out and "[1/1]" in out
    assert "seem-" not in out and "hipporag2-" not in out
    assert out.splitlines()[-1].startswith("verify OK: 1/1 selected runs (of 4)")
    assert f"[1/1] replaying {VANILLA} (12 questions, 24 calls" in err

    replays: list[str] = []
    monkeypatch.setattr(verify_mod, "rerun", _fake_rerun(replays))
    monkeypatch.setattr(verify_mod, "_import_calls", lambda *a: True)
    rc = bundle_main(["verify", str(BUNDLE), "--run", "vanilla*", "--run", "seem-6a7230c560", "--keep", str(keep)])
    out, _ = capsys.readouterr()
    assert rc == 0 and replays == ["seem-6a7230c560"], out  # Vanilla was verified above
    assert "1 of 2 runs already verified at " in out and "--fresh to redo" in out
    assert "(1 verified earlier)" in out.splitlines()[-1]

    rc = bundle_main(["verify", str(BUNDLE), "--run", "vanilla*", "--fresh", "--keep", str(keep)])
    assert rc == 0 and replays[-1] == "vanilla-74db4d9ecf"
    assert "already verified" not in capsys.readouterr().out

    assert bundle_main(["verify", str(BUNDLE), "--run", "vanila*", "--keep", str(keep)]) == 2
    assert "--run vanila* matches no run" in capsys.readouterr().err


def test_a_replay_shows_its_progress(tmp_path: Path, monkeypatch) -> None:
    notes: list[str] = []

    def work_a_while(run: Path, work: Path, replay: Replay | None) -> None:
        folder = work / "runs" / "longmemeval_oracle" / run.name
        folder.mkdir(parents=True)
        (folder / "predictions.jsonl").write_text('{"id": 1}\n{"id": 2}\n')
        assert replay is not None
        replay.keys.update({"k1", "k2", "k3"})
        deadline = time.monotonic() + 10
        while not any("answered" in n for n in notes) and time.monotonic() < deadline:
            time.sleep(0.02)

    monkeypatch.setattr(verify_mod, "rerun", _fake_rerun([], work_a_while))
    monkeypatch.setattr(verify_mod, "_import_calls", lambda *a: True)
    rc = verify_bundle(BUNDLE, work=tmp_path, log=lambda s: None, runs=["seem*"], every=0.05, note=notes.append)
    assert rc == 0
    assert notes[0].startswith(f"[1/1] replaying {SEEM} (12 questions, 250 calls")
    tick = next(n for n in notes if "answered" in n)
    assert "[1/1] seem-6a7230c560:" in tick and "3/250 calls read, 2/12 answered, 0/12 judged" in tick


def test_a_missing_package_environment_is_announced_before_the_replay(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMEVAL_HOME", str(tmp_path / "home"))
    lock = tmp_path / "fake.txt"
    lock.write_text("example-package==1.0\n")  # a spec no environment was built for
    fake = envs.EnvSpec("hipporag2", str(lock), worker="hipporag2_worker.py", probe="hipporag",
                        build_cost=HippoRAG2Method.env_spec.build_cost)
    monkeypatch.setattr(HippoRAG2Method, "env_spec", fake)
    events: list[str] = []
    monkeypatch.setattr(verify_mod, "rerun", _fake_rerun(events))
    monkeypatch.setattr(verify_mod, "_import_calls", lambda *a: True)

    def verify() -> int:
        return verify_bundle(BUNDLE, work=tmp_path / "w", log=lambda s: None, runs=["hipporag2"],
                             every=0, note=events.append)

    assert verify() == 0
    notice = [e for e in events if e.startswith("building ")]
    assert notice == [f"building the hipporag2 package environment (about 1.5 GB, several minutes) needed to "
                      f"replay runs of hipporag2; it is reused afterwards ({envs.spec_dir(fake)})"]
    assert events.index(notice[0]) < events.index("hipporag2-6f7a7c037e")  # said before the replay

    envs.spec_dir(fake).mkdir(parents=True)
    (envs.spec_dir(fake) / envs.MARKER).write_text(json.dumps({"name": "hipporag2"}))
    events.clear()
    assert verify() == 0
    assert events[-1] == "hipporag2-6f7a7c037e" and not any(e.startswith("building ") for e in events)


def test_ctrl_c_says_what_was_verified_and_how_to_resume(tmp_path: Path, capsys, monkeypatch) -> None:
    replays: list[str] = []

    def second_interrupted(run: Path, work: Path, replay: Replay | None) -> None:
        if len(replays) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(verify_mod, "rerun", _fake_rerun(replays, second_interrupted))
    monkeypatch.setattr(verify_mod, "_import_calls", lambda *a: True)
    keep = tmp_path / "keep"
    args = ["verify", str(BUNDLE), "--run", "vanilla*", "--run", "seem*", "--keep", str(keep)]
    assert bundle_main(args) == 130
    out, err = capsys.readouterr()
    assert "Traceback" not in err and err.strip().splitlines()[-1] == (
        f"interrupted during the replay of {SEEM}: 1 of 2 runs verified OK so far (recorded in "
        f"{next(keep.glob('verify-*.json'))}); run the same command again to resume, or add --fresh to redo them all")
    assert f"OK   {VANILLA}" in out and "verify OK" not in out

    replays.clear()
    assert bundle_main(args) == 0
    assert replays == ["seem-6a7230c560"] and "1 of 2 runs already verified" in capsys.readouterr().out


def test_ctrl_c_that_a_replay_turns_into_an_error_still_stops_the_verify(tmp_path: Path, monkeypatch) -> None:
    """A worker killed by the same Ctrl-C fails its replay with an error of its own: that run must not
    be reported FAIL and the next one started."""
    replays: list[str] = []

    def swallowed(run: Path, work: Path, replay: Replay | None) -> None:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            pass  # as a pipeline that reports a dead worker as a RuntimeError would

    monkeypatch.setattr(verify_mod, "rerun", _fake_rerun(replays, swallowed))
    monkeypatch.setattr(verify_mod, "_import_calls", lambda *a: True)
    notes: list[str] = []
    rc = verify_bundle(BUNDLE, work=tmp_path, log=notes.append, runs=["vanilla*", "seem*"], every=0,
                       note=notes.append, state_dir=tmp_path)
    assert rc == 130 and replays == ["vanilla-74db4d9ecf"]
    assert notes[-1] == f"interrupted during the replay of {VANILLA}: none of the 2 runs verified yet; run the same command again"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
