"""The core packages type-check under mypy as CI runs it: pyproject.toml's [tool.mypy] (which
packages, which third-party modules are read as Any, unused `# type: ignore`s are errors).

Run in a subprocess from the repository root, so `mypy` typed there checks exactly this; a second
test plants a type error and an unneeded ignore, so a checker that reads no config or checks
nothing cannot pass for a clean result.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)


def test_mypy_is_installed() -> None:
    done = _mypy("--version")
    assert done.returncode == 0, f"mypy is missing: pip install -e '.[dev]'\n{done.stderr}"


def test_the_core_packages_type_check() -> None:
    done = _mypy()  # the files, cache and options of [tool.mypy]
    assert done.returncode == 0, f"mypy found type errors:\n{done.stdout}{done.stderr}"
    assert "Success: no issues found" in done.stdout


def test_the_config_fails_a_type_error_and_an_unneeded_ignore(tmp_path: Path) -> None:
    bad = tmp_path / "planted.py"
    bad.write_text('def half(n: int) -> int:\n    return n / 2\n\n\n'
                   'count: int = 3  # type: ignore[assignment]\n', encoding="utf-8")
    done = _mypy("--cache-dir", str(tmp_path / "cache"), str(bad))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "planted.py:2: error: Incompatible return value type" in done.stdout
    assert 'planted.py:5: error: Unused "type: ignore" comment' in done.stdout  # warn_unused_ignores read
