"""Where setup's time went: the breakdown of one `bash scripts/setup.sh` run, from the step log it writes.

    python scripts/setup_timing.py                      # the newest $MEMEVAL_HOME/logs/setup-*.tsv
    python scripts/setup_timing.py FILE.tsv

setup.sh appends `<epoch seconds>\\t<start|end>\\t<step>` for every step (venv, pip-upgrade, packages,
data, tokenizer, baselines, models, llama-server-build, llama-server-install, embedder, and `setup`
for the whole run). The models and the llama-server build run in the background, so steps overlap:
the table gives each step's start (seconds after setup began), duration and whether it ran behind
other steps, then the wall time and what waiting for the background cost the foreground.
Standard library only: it runs before or without the virtual environment.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path

BACKGROUND = ("models", "llama-server-build")  # started behind the foreground steps by setup.sh


@dataclass
class Step:
    name: str
    start: float
    end: float | None = None  # None: the step never finished (setup failed or was stopped in it)

    @property
    def seconds(self) -> float | None:
        return None if self.end is None else self.end - self.start


def read_steps(path: Path) -> list[Step]:
    """Steps in order of their start; a malformed line is skipped (a killed setup may tear the last)."""
    steps: dict[str, Step] = {}
    for line in path.read_text().splitlines():
        parts = line.split("\t")
        if len(parts) != 3:
            continue
        try:
            t = float(parts[0])
        except ValueError:
            continue
        kind, name = parts[1], parts[2]
        if kind == "start":
            steps[name] = Step(name, t)
        elif kind == "end" and name in steps:
            steps[name].end = t
    return sorted(steps.values(), key=lambda s: s.start)


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return "unfinished"
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s:02d} s" if m else f"{s} s"


def breakdown(steps: list[Step]) -> str:
    """The table and its summary lines."""
    if not steps:
        return "no steps recorded"
    whole = next((s for s in steps if s.name == "setup"), None)
    t0 = whole.start if whole else steps[0].start
    rows = [s for s in steps if s.name != "setup"]
    width = max(len(s.name) for s in rows) if rows else 4
    out = [f"{'step':<{width}}  {'from':>7}  {'took':>13}  ran"]
    for s in rows:
        where = "background" if s.name in BACKGROUND else "foreground"
        if s.name.startswith("wait-"):
            where = "foreground, waiting"
        out.append(f"{s.name:<{width}}  {s.start - t0:>6.0f}s  {fmt(s.seconds):>13}  {where}")
    if whole is not None:
        out.append(f"wall time: {fmt(whole.seconds)}")
    waited = [s for s in rows if s.name.startswith("wait-") and s.seconds is not None]
    if waited:
        out.append("the foreground waited " + ", ".join(f"{fmt(s.seconds)} for {s.name[5:]}" for s in waited)
                   + " after its own steps")
    done = [s.seconds for s in rows if s.seconds is not None and not s.name.startswith("wait-")]
    if whole is not None and whole.seconds and done and sum(done) > whole.seconds + 1:
        out.append(f"sum of the steps: {fmt(sum(done))}; {fmt(sum(done) - whole.seconds)} of it ran in parallel")
    return "\n".join(out)


def newest_log() -> Path | None:
    home = Path(os.environ.get("MEMEVAL_HOME") or Path.home() / ".cache" / "memeval")
    logs = sorted((home / "logs").glob("setup-*.tsv"), key=lambda p: p.stat().st_mtime)
    return logs[-1] if logs else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("file", nargs="?", type=Path, help="a setup-*.tsv step log (default: the newest)")
    args = p.parse_args(argv)
    path = args.file or newest_log()
    if path is None or not path.is_file():
        print(f"error: no setup step log {'at ' + str(path) if path else 'under $MEMEVAL_HOME/logs'}; "
              "run bash scripts/setup.sh first", file=sys.stderr)
        return 1
    print(f"setup time breakdown ({path}):")
    print(breakdown(read_steps(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
