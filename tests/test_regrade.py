"""`memeval regrade`: a saved run under another grounding version, from the cache alone, in a new
folder; the old folder untouched, no request to any server, and a setting that needs fresh calls
refused with the call named."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from conftest import _data_dir, run_cli, scripted_overrides, v1_bundle
from scripted_server import ScriptedServer

from memeval.cli import regrade


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> tuple[ScriptedServer, Path, Path]:
    tmp = tmp_path_factory.mktemp("regrade")
    server = ScriptedServer().__enter__()
    done = run_cli(["method=embedding_rag", "subset.n=6", "dataset=epbench20",
                    *scripted_overrides(server, tmp, _data_dir())])
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = (tmp / "runs" / "epbench20").iterdir()
    yield server, tmp, run
    server.__exit__(None, None, None)


def test_regrade_writes_a_new_run_under_the_changed_version_with_no_request(made, capsys) -> None:
    server, tmp, run = made
    before, sent = _digest(run), server.count()
    assert json.loads((run / "metrics.json").read_text())["provenance"]["protocol"]["grounding_version"] == 7
    out_root = tmp / "regraded"
    rc = regrade.main([str(run), "--set", "dataset.protocol.grounding_version=3", "--output-root", str(out_root)])
    assert rc == 0, capsys.readouterr().err
    assert server.count() == sent  # every call came from the cache
    assert _digest(run) == before  # the saved run is never touched
    (new,) = (out_root / "epbench20").iterdir()
    assert new.name != run.name and new.name.startswith("embedding_rag-")
    metrics = json.loads((new / "metrics.json").read_text())
    assert metrics["provenance"]["protocol"]["grounding_version"] == 3
    old_lines = [json.loads(x) for x in (run / "judgments.jsonl").read_text().splitlines()]
    new_lines = [json.loads(x) for x in (new / "judgments.jsonl").read_text().splitlines()]
    assert [j["question_id"] for j in new_lines] == [j["question_id"] for j in old_lines]
    assert all("zero_cue_assertion" in j for j in old_lines if "judge_error" not in j)
    assert not any("zero_cue_assertion" in j for j in new_lines)  # version 3 lines have no such field
    assert f"-> {new}" in capsys.readouterr().out
    # the index it recorded is still there for the health checks and the explorer
    assert Path(json.loads((new / "index.json").read_text())["index_folder"]).is_dir()
    # a table of runs scored under different grounding versions says they do not compare
    from memeval.evaluation.compare import main as compare

    assert compare([str(run), str(new)]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("- scoring:")]
    assert "grounding v3" in line and "grounding v7" in line and "DIFFERS" in line
    # ... and so do the report's tables and the line under every figure's title
    from memeval.evaluation.report.figures import setup_line
    from memeval.evaluation.report.tables import provenance
    from memeval.evaluation.runs.scored import load_runs

    runs = load_runs([run, new])
    (flag,) = [x for x in provenance(runs) if x.startswith("credit:")]
    credit = metrics["credit"]
    assert f"{credit}, grounding v7 | {credit}, grounding v3" in flag and "DIFFERS" in flag
    assert f"credit: {credit}, grounding v7;" in setup_line(runs[:1], runs[0].presentation)


def test_a_setting_that_needs_new_calls_is_refused_and_named(made, capsys) -> None:
    server, tmp, run = made
    sent = server.count()
    rc = regrade.main([str(run), "--set", "judge.model=another-judge", "--output-root", str(tmp / "other")])
    assert rc == 1 and server.count() == sent
    err = capsys.readouterr().err
    assert "call(s) the cache does not hold" in err and "another-judge" in err and "python run.py" in err


def test_bad_settings_are_refused_before_anything_runs(made, capsys, tmp_path: Path) -> None:
    server, tmp, run = made
    assert regrade.main([str(run), "--set", "dataset.protocol.no_such_key=1", "--output-root", str(tmp_path)]) == 2
    assert "no setting 'dataset.protocol.no_such_key'" in capsys.readouterr().err
    # the same folder name under the same root would rewrite the saved run
    assert regrade.main([str(run), "--set", "tracking.mode=disabled", "--output-root", str(tmp / "runs")]) == 2
    assert "rewrite it" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
    with pytest.raises(SystemExit):
        regrade.main([str(run), "--set", "grounding_version"])


def test_a_run_saved_before_grounding_versions_regrades_from_its_bundle(tmp_path: Path, capsys) -> None:
    # the v1 bundle's vanilla run (0.5B answers and judge, config format 0: no grounding_version key,
    # read as version 1) regraded under version 4 from the bundle's own calls (its extract in
    # tests/fixtures/v1_bundles keeps that run's calls; the manifest's file list names more than the
    # extract holds, so the calls are imported as `bundle import` does after its hash check)
    from memeval.model_access.cache_cli import import_bundle
    from memeval.model_access.cache_store import open_cache

    bundle = v1_bundle("epbench20-local")
    cache = tmp_path / "calls.sqlite"
    store = open_cache(cache, "sqlite")
    try:
        counts = import_bundle(store, bundle / "calls.jsonl.gz")
    finally:
        store.close()
    assert counts["added"] > 0 and counts["rejected"] == 0
    (run,) = (bundle / "runs" / "epbench20").glob("vanilla-*")
    before = _digest(run)
    rc = regrade.main([str(run), "--set", "dataset.protocol.grounding_version=4", "--output-root",
                       str(tmp_path / "out"), "--cache", str(cache)])
    assert rc == 0, capsys.readouterr().err
    assert _digest(run) == before
    (new,) = (tmp_path / "out" / "epbench20").iterdir()
    old_f1 = json.loads((run / "metrics.json").read_text())["overall"]["f1"]
    new_metrics = json.loads((new / "metrics.json").read_text())
    assert new_metrics["provenance"]["protocol"]["grounding_version"] == 4
    # version 1 kept the 0.5B judge's credits for items the answers do not state; version 4 does not
    assert new_metrics["overall"]["f1"] < old_f1 - 0.2
