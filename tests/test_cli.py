"""The `memeval` console script: every command listed and reached with its arguments unchanged,
the old `python run.py` / `python -m ...` forms still working, and one judge check for every
dataset that measures the judge version the shipped dataset config sets."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import ROOT, scripted_overrides

from memeval.cli import main as cli_main
from memeval.cli.commands import COMMANDS
from memeval.evaluation.epbench import judge_check as epbench_labels
from memeval.evaluation.epbench.judge import ITEM_CHARS

EXPECTED = {"run", "report", "compare", "rescore", "bundle", "judge-check", "cache", "usage", "estimate"}


def _memeval(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        rc = cli_main.main(argv)
    except SystemExit as exc:  # argparse's --help and usage errors
        rc = int(exc.code or 0)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_help_lists_every_command_with_its_line(capsys) -> None:
    assert set(COMMANDS) >= EXPECTED
    rc, out, _ = _memeval(["--help"], capsys)
    assert rc == 0
    for c in COMMANDS.values():
        assert re.search(rf"^\s+{re.escape(c.name)}\s+{re.escape(c.help[:30])}", out, re.M), c.name
        assert "\n" not in c.help


def test_help_loads_no_command_implementation() -> None:
    """`memeval --help` stays instant: the commands' code is imported when one runs."""
    code = ("import sys, memeval.cli.main\n"
            "print([m for m in ('hydra', 'omegaconf', 'pandas', 'openai', 'memeval.harness', 'memeval.evaluation') "
            "if m in sys.modules])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr[-2000:]


def test_the_console_script_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["memeval"] == "memeval.cli.main:main"
    assert project["tool"]["setuptools"]["packages"]["find"]["include"] == ["memeval*"]  # one namespace


def test_no_command_or_an_unknown_one_exits_2_naming_the_commands(capsys) -> None:
    for argv in ([], ["frobnicate"]):
        rc, _, err = _memeval(argv, capsys)
        assert rc == 2 and "judge-check" in err


def test_a_command_gets_its_arguments_unchanged(capsys, tmp_path: Path) -> None:
    rc, _, err = _memeval(["rescore", str(tmp_path)], capsys)
    assert rc == 2 and f"{tmp_path} is not a run folder" in err
    rc, out, _ = _memeval(["compare", "--help"], capsys)
    assert rc == 0 and out.startswith("usage: memeval compare")
    rc, out, _ = _memeval(["bundle", "verify", "--help"], capsys)
    assert rc == 0 and "usage: memeval bundle verify" in out
    assert sys.argv[0] != "memeval compare"  # the usage name is put back


def _sh(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def test_python_m_memeval_is_the_one_module_entry(data_dir: Path) -> None:
    """`python -m memeval COMMAND` is `memeval COMMAND` (same argv, same usage names); the old
    per-package aliases are gone, so only src/memeval/__main__.py exists."""
    r = _sh("-m", "memeval", "judge-check", "--deterministic-only", "--data-dir", str(data_dir), "--every", "8")
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1].startswith("deterministic matcher accuracy: ")
    r = _sh("-m", "memeval", "bundle", "verify", "--help")
    assert r.returncode == 0 and "usage: memeval bundle verify" in r.stdout, r.stderr[-2000:]
    r = _sh("-m", "memeval", "--help")
    assert r.returncode == 0 and "judge-check" in r.stdout and "audit" in r.stdout
    assert [p.relative_to(ROOT).as_posix() for p in (ROOT / "src").rglob("__main__.py")] == ["src/memeval/__main__.py"]


def test_run_passes_hydra_overrides_and_sweeps_through(scripted, tmp_path: Path, data_dir: Path) -> None:
    """`memeval run -m ...` is a Hydra sweep; `python run.py` with the same overrides reuses its
    run folder and makes no new call."""
    args = ["method=vanilla", "subset.n=1", *scripted_overrides(scripted, tmp_path, data_dir)]
    r = _sh("-m", "memeval", "run", "-m", *args, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    (sweep,) = (tmp_path / "runs" / "_multirun").iterdir()
    (job,) = sweep.glob("*/job.json")
    run_dir = Path(json.loads(job.read_text())["run_dir"])
    calls = scripted.count()
    r = _sh(str(ROOT / "run.py"), *args, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads((run_dir / "usage.json").read_text())["totals"]["fresh"]["calls"] == 0
    assert scripted.count() == calls


def _judge_check(scripted, tmp_path: Path, data_dir: Path, *extra: str) -> tuple[list[str], dict]:
    labels = tmp_path / "labels.jsonl"  # every eighth label: every answer kind, quickly
    labels.write_text("\n".join(epbench_labels.LABELS.read_text().splitlines()[::8]) + "\n")
    numbers = tmp_path / f"n{len(list(tmp_path.glob('n*.json')))}.json"
    rc = cli_main.main(["judge-check", "--dataset", "epbench", "--judge", "openai_compatible",
                        "--data-dir", str(data_dir), "--labels", str(labels), "--json", str(numbers),
                        "--override", f"judge.base_url={scripted.base_url}", "judge.model=scripted-judge",
                        *extra])
    assert rc == 0
    return [r["body"] for r in scripted.requests], json.loads(numbers.read_text())


def _claims(bodies: list[dict]) -> list[str]:
    """The requests that ask the judge for claimed items (one-pass judging, two-pass extraction)."""
    texts = [json.dumps(b) for b in bodies]
    return [t for t in texts if '"identified_items"' in t or '"asserted_items"' in t]


def test_judge_check_measures_the_judge_version_the_epbench_config_ships(scripted, tmp_path: Path,
                                                                         data_dir: Path, capsys) -> None:
    from memeval.harness.estimate import compose

    shipped = compose(["dataset=epbench20"]).dataset.protocol.judge_version  # the fair experiment's (2)
    assert shipped == 2
    bodies, numbers = _judge_check(scripted, tmp_path, data_dir, "--cache", str(tmp_path / "c.sqlite"))
    out = capsys.readouterr().out
    assert numbers["judge_version"] == shipped and "judge version 2" in numbers["judge"]
    assert "judge version measured: 2 (dataset=epbench20" in out
    assert out.strip().splitlines()[-1].startswith("deterministic matcher accuracy: ")
    bounded = f'"maxLength": {ITEM_CHARS}'  # version 2's schemas bound every claimed item
    assert _claims(bodies) and all(bounded in b for b in _claims(bodies))
    assert all(m["judge_failed"] == 0 for m in numbers["overall"].values())

    n = len(scripted.requests)
    bodies, numbers = _judge_check(scripted, tmp_path, data_dir, "--cache", str(tmp_path / "c.sqlite"),
                                   "--judge-version", "1")
    assert numbers["judge_version"] == 1 and "judge version measured: 1" in capsys.readouterr().out
    assert _claims(bodies[n:]) and not any(bounded in b for b in _claims(bodies[n:]))


def test_judge_check_opens_a_directory_cache_and_replays_it(scripted, tmp_path: Path, data_dir: Path,
                                                            capsys) -> None:
    """cache_backend=directory is a folder (never handed to SQLite); --replay then reads it alone
    (a pinned revision keeps the endpoint out of the cache key, as for a local judge)."""
    cache = tmp_path / "calls"
    folder = ("--cache", str(cache), "--override", "cache_backend=directory", "judge.model_revision=r1")
    _, first = _judge_check(scripted, tmp_path, data_dir, *folder)  # a second --override list adds to the first
    assert cache.is_dir() and any(cache.rglob("*"))
    n = len(scripted.requests)
    _, again = _judge_check(scripted, tmp_path, data_dir, *folder, "--replay")
    assert len(scripted.requests) == n  # every call came from the folder
    assert again["overall"] == first["overall"]
    capsys.readouterr()


@pytest.mark.parametrize("name", ["longmemeval"])
def test_judge_version_is_refused_where_the_protocol_has_one(name: str, data_dir: Path, capsys) -> None:
    rc, _, err = _memeval(["judge-check", "--dataset", name, "--deterministic-only", "--judge-version", "2",
                           "--data-dir", str(data_dir)], capsys)
    assert rc == 2 and "has one judge version" in err


def test_audit_lists_the_registered_audits_and_runs_one_with_its_arguments(capsys) -> None:
    """`memeval audit` lists the `memeval.audits` entry points (the former one-off scripts, now
    beside what they audit); `memeval audit NAME ARGS` hands ARGS to that audit under its own name."""
    rc, _, err = _memeval(["audit"], capsys)
    assert rc == 2 and "gsw-entities" in err and "run-facts" in err and "What GSW's kind checks" in err
    rc, out, _ = _memeval(["audit", "run-facts", "--help"], capsys)
    assert rc == 0 and out.startswith("usage: memeval audit run-facts")
    rc, _, err = _memeval(["audit", "gsw-entitis"], capsys)
    assert rc == 2 and "no audit 'gsw-entitis'" in err
    assert not list((ROOT / "scripts").glob("*audit*.py"))  # the audits left scripts/
