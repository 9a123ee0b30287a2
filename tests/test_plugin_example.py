"""An out-of-tree method plugin works with no edit to memeval: examples/plugin_bm25 is pip-installed
into this interpreter's environment (editable; reinstalling is harmless, and it is uninstalled
afterwards unless it was installed before), then run end to end through the CLI on examples/saltmarsh against the scripted server, reported
and health-checked. Plus the registry's refusal of one name registered by two distributions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cli, scripted_overrides

from memeval import plugins
from memeval.datasets.custom import CustomLoader

PLUGIN = ROOT / "examples" / "plugin_bm25"
SALTMARSH = ROOT / "examples" / "saltmarsh"


def _memeval(*args: str, timeout: int = 240) -> subprocess.CompletedProcess:
    env = {**os.environ, "HYDRA_FULL_ERROR": "0"}
    return subprocess.run([sys.executable, "-m", "memeval", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=timeout)


def _pip(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def bm25_installed() -> Iterator[None]:
    """`pip install --no-deps -e examples/plugin_bm25`, as a user would (no build isolation: the
    environment's own setuptools builds it, so no network is needed). The environment is left as
    found: uninstalled afterwards unless it was installed before, so the suite's other tests
    (which list every method) see the same methods whichever order they run in."""
    before = "bm25" in plugins.registered("method")
    _pip("install", "-q", "--no-deps", "--no-build-isolation", "-e", str(PLUGIN))
    plugins.refresh()
    found = plugins.registered("method").get("bm25")
    assert found is not None and found.dist == "memeval-bm25" and not found.builtin
    yield
    if not before:
        _pip("uninstall", "-q", "-y", "memeval-bm25")
    plugins.refresh()


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_bm25_plugin_runs_end_to_end_through_the_cli(bm25_installed: None, scripted: Any, tmp_path: Path) -> None:
    listed = _memeval("ls", "methods", timeout=120)
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.split()[0] == "bm25")
    assert "[from memeval-bm25]" in line and "BM25" in line  # its class's docstring, its package

    done = _memeval("run", "method=bm25", "method.k1=1.2", "dataset=custom", f"dataset.path={SALTMARSH}",
                    "subset.n=null", *scripted_overrides(scripted, tmp_path, tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    run = Path(done.stdout.split("run folder: ")[1].split()[0])
    assert run.is_dir() and run.parent.name == "custom-saltmarsh" and run.name.startswith("bm25-")
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["provenance"]["method"] == "bm25"
    meta = json.loads((run / "meta.json").read_text())
    code = meta["method_code"]
    assert code["core"] is False and code["module"] == "memeval_bm25.method"
    preds = _lines(run / "predictions.jsonl")
    assert len(preds) == 10 and all(1 <= len(p["context_chapters"]) <= 3 for p in preds)  # the cap: 3 units
    assert all(p["retrieval"]["scores"] for p in preds)  # what retrieve returned, recorded per question
    assert 0 < metrics["retrieval"]["overall"]["gold_recall"] <= 1

    report = _memeval("report", str(run), "--out", str(tmp_path / "report"), timeout=180)
    assert report.returncode == 0, report.stderr[-3000:]
    assert "bm25" in (tmp_path / "report" / "report.md").read_text()
    (run / "health.json").unlink(missing_ok=True)
    health = _memeval("health", str(run), timeout=180)
    assert health.returncode == 0, health.stdout[-3000:] + health.stderr[-3000:]  # no check failed
    checks = {c["name"]: c["status"] for c in json.loads((run / "health.json").read_text())["checks"]}
    assert checks["empty_contexts"] == checks["beyond_cap"] == checks["complete"] == "ok"


def test_run_py_composes_the_plugin_with_its_shipped_config(bm25_installed: None) -> None:
    done = run_cli(["method=bm25", "method.b=0.5", "--cfg", "job", "--package", "method"], timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "_target_: memeval_bm25.method.BM25" in done.stdout and "b: 0.5" in done.stdout
    typo = run_cli(["method=bm25", "method.kk1=1.2"], timeout=120)
    assert typo.returncode == 2 and "method bm25 has no parameter 'kk1'" in typo.stderr
    assert "did you mean k1?" in typo.stderr
    near = run_cli(["method=bm52"], timeout=120)
    assert near.returncode == 2 and "did you mean 'bm25'?" in near.stderr


@dataclass(frozen=True)
class _Dist:
    name: str


@dataclass(frozen=True)
class _EntryPoint:
    name: str
    value: str
    dist: _Dist


def test_one_name_from_two_distributions_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    twice = [_EntryPoint("bm25", "memeval_bm25.method:BM25", _Dist("memeval-bm25")),
             _EntryPoint("bm25", "other_bm25.rank:BM25", _Dist("other-bm25"))]
    monkeypatch.setattr(plugins, "entry_points", lambda group: twice if group == "memeval.methods" else [])
    plugins.refresh()
    try:
        with pytest.raises(plugins.PluginError, match="registered twice") as refused:
            plugins.registered("method")
        assert "memeval-bm25" in str(refused.value) and "other-bm25" in str(refused.value)
        monkeypatch.setattr(plugins, "entry_points", lambda group: twice[:1] if group == "memeval.methods" else [])
        plugins.refresh()
        assert plugins.registered("method")["bm25"].dist == "memeval-bm25"  # one of them: fine
    finally:
        monkeypatch.undo()
        plugins.refresh()


class NotesLoader(CustomLoader):
    """Notes kept as a custom dataset folder: a dataset plugin's loader (this test registers it)."""

    protocol = "custom"  # a registered protocol plugin (or a dotted class path)


def test_a_dataset_plugin_becomes_a_dataset_option(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A loader another distribution registers, with no conf/dataset file, composes as
    `dataset=NAME`: its loader's and its protocol's parameters, overlaid by the YAML it ships."""
    from hydra import compose, initialize_config_dir
    from hydra.core.config_store import ConfigStore
    from hydra.utils import instantiate

    from memeval.harness.resolvers import register_resolvers
    from memeval.harness.schema import register_schemas
    from memeval.paths import CONF

    shipped = tmp_path / "notes.yaml"
    shipped.write_text(f"path: {SALTMARSH}\nloader:\n  path: ${{..path}}\n  name: acme-notes\n"
                       "protocol:\n  resamples: 50\n")
    monkeypatch.setattr(NotesLoader, "config_file", str(shipped), raising=False)  # absolute: beside nothing
    real = plugins.entry_points
    fake = _EntryPoint("acme_notes", f"{__name__}:NotesLoader", _Dist("acme-notes"))
    monkeypatch.setattr(plugins, "entry_points",
                        lambda group: [*real(group=group), *([fake] if group == "memeval.datasets" else [])])
    plugins.refresh()
    try:
        register_resolvers()
        register_schemas()
        with initialize_config_dir(str(CONF), version_base="1.3"):
            cfg = compose("config", overrides=["dataset=acme_notes", "dataset.protocol.seed=3"])
        assert cfg.dataset.name == "acme_notes"
        assert cfg.dataset.loader._target_ == f"{__name__}.NotesLoader"
        assert cfg.dataset.loader.context_cap_units is None and cfg.dataset.loader.strata_key is None  # its defaults
        assert cfg.dataset.protocol._target_ == "memeval.evaluation.custom.CustomProtocol"
        assert (cfg.dataset.protocol.resamples, cfg.dataset.protocol.seed) == (50, 3)  # its YAML, the command line
        dataset = instantiate(cfg.dataset.loader).load()
        assert dataset.name == "acme-notes" and len(dataset.questions) == 10
        assert instantiate(cfg.dataset.protocol).grounding_version == 2
    finally:
        ConfigStore.instance().repo.get("dataset", {}).pop("acme_notes.yaml", None)
        monkeypatch.undo()
        plugins.refresh()
