"""`memeval health` on a saved run reads its corpus as the runner handed it to the run: a run that
indexed only the first units of each corpus (`subset.index_units`) is checked against those units.

Before, the command read the whole corpus, so a run's health changed between the run (the runner
passes its cut dataset) and a later `memeval health`: graphiti's context unsupported_claims on
LoCoMo conv-30 sessions 1-8 read 0.330 in the run and 0.232 from the command (claims found only in
sessions the memory never saw counted as supported).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parents[1]
CUT = sorted(p.parent for p in (ROOT / "results").glob("*/runs/*/*/config.yaml")
             if (OmegaConf.load(p).get("subset") or {}).get("index_units") is not None)


@pytest.mark.parametrize("run", CUT, ids=lambda p: p.name)
def test_the_command_reads_health_as_the_run_wrote_it(run: Path, tmp_path: Path, data_dir: Path) -> None:
    from memeval.evaluation.runs.health_file import load_thresholds
    from memeval.harness.health import write_health

    copy = Path(shutil.copytree(run, tmp_path / run.name))
    (copy / "health.json").unlink()
    write_health(copy, load_thresholds())
    # every check but the judge's (its false-accept rate comes from a measurement file the test
    # environment points elsewhere): index and context checks read the corpus
    made, saved = (_checks(json.loads((r / "health.json").read_text())) for r in (copy, run))
    assert made == saved
    assert any(scope in ("index", "context") for scope, _ in saved)


def _checks(health: dict) -> dict[tuple[str, str], dict]:
    return {(c["scope"], c["name"]): c for c in health["checks"] if c["scope"] != "judge"}


def test_there_is_a_bundled_run_with_a_cut_corpus() -> None:
    assert CUT, "no bundled run indexes a cut corpus: this file tests nothing"
