"""Both notebooks execute (nbclient) on small scripted run folders, so a broken notebook fails CI."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT
from nbclient import NotebookClient
from sweep_runs import METHODS, run_dir, sweep_root


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    root = sweep_root(tmp_path_factory.mktemp("sweep"))
    return [run_dir(root, m) for m in METHODS]


def _execute(name: str, env: dict[str, str], monkeypatch) -> nbformat.NotebookNode:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    NotebookClient(nb, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    return nb


def _text(nb: nbformat.NotebookNode) -> str:
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            out.append(o.get("text", ""))
            out.extend(str(v) for v in o.get("data", {}).values())
    return "\n".join(out)


def test_results_overview_executes(runs, tmp_path, monkeypatch) -> None:
    nb = _execute("results_overview.ipynb", {"MEMEVAL_RUNS": os.pathsep.join(map(str, runs)),
                                             "MEMEVAL_REPORT_OUT": str(tmp_path / "rep")}, monkeypatch)
    text = _text(nb)
    assert "Table 2 shape" in text and "Chronological Awareness" in text and "scripted-judge" in text
    assert all(m in text for m in METHODS)
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == 3
    assert (tmp_path / "rep" / "report.html").exists()


def test_error_analysis_executes_with_filters(runs, monkeypatch) -> None:
    pattern = str(runs[0].parent / "*")
    nb = _execute("error_analysis.ipynb", {"MEMEVAL_RUNS": pattern, "MEMEVAL_BUCKET": "0",
                                           "MEMEVAL_DISAGREEMENT": "1"}, monkeypatch)
    text = _text(nb)
    assert "question(s) selected (bucket=0" in text
    for row in ("context sent", "answer", "judge verdict", "matcher verdict", "gold"):
        assert row in text, row
    assert all(m in text for m in METHODS)
