"""setup.sh's step log and background steps, and the breakdown scripts/setup_timing.py prints from it."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import setup_timing  # noqa: E402


def _gone(pid: str, wait_s: float = 10.0) -> bool:
    """True once the process has exited (a zombie awaiting its reaper counts as exited)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, IndexError):
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False


def _log(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "setup-x.tsv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_breakdown_reads_overlapping_steps_and_a_torn_log(tmp_path: Path) -> None:
    path = _log(tmp_path, [
        "100.0\tstart\tsetup", "100.5\tstart\tvenv", "110.5\tend\tvenv",
        "111.0\tstart\tllama-server-build", "111.2\tstart\tpackages", "191.2\tend\tpackages",
        "191.5\tstart\twait-llama-server-build", "471.0\tend\tllama-server-build",
        "471.5\tend\twait-llama-server-build", "472.0\tstart\tembedder", "47",  # torn last line
    ])
    steps = {s.name: s for s in setup_timing.read_steps(path)}
    assert steps["llama-server-build"].seconds == 360.0 and steps["embedder"].end is None
    text = setup_timing.breakdown(list(steps.values()))
    assert re.search(r"^llama-server-build +11s +6 min 00 s +background$", text, re.M)
    assert "embedder" in text and "unfinished" in text
    assert "waited 4 min 40 s for llama-server-build" in text
    assert "wall time: unfinished" in text  # setup never ended: no wall time is claimed


def test_setup_background_steps_fail_setup_and_are_stopped(tmp_path: Path) -> None:
    """The helpers setup.sh defines: a failed background step stops setup with its log's tail;
    an early exit stops a background step still running (its own process group)."""
    text = (ROOT / "scripts" / "setup.sh").read_text()
    helpers = text[text.index("STAMP="):text.index("mark start setup")]
    script = tmp_path / "s.sh"
    script.write_text(f"""set -euo pipefail
HOME_DIR={tmp_path}
mkdir -p "$HOME_DIR/logs"
{helpers}
mark start setup
fails() {{ echo "compiler said no"; return 3; }}
start_background slow sleep 30; SLOW=$!
echo $SLOW > {tmp_path}/slow.pid
start_background broken fails; BROKEN=$!
wait_background broken "$BROKEN"
echo not reached
""")
    r = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "not reached" not in r.stdout
    assert "broken failed" in r.stderr and "compiler said no" in r.stderr
    pid = (tmp_path / "slow.pid").read_text().strip()
    assert _gone(pid)  # the background step was stopped with setup, not left running for 30 s
    log = next((tmp_path / "logs").glob("setup-*.tsv")).read_text()
    assert "\tend\tslow" not in log and "\tend\tsetup" not in log
