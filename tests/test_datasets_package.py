"""The top-level `datasets` package is ours; the HuggingFace library must not be needed or installed."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_import_resolves_to_the_framework_package() -> None:
    out = subprocess.run([sys.executable, "-c", "import datasets; print(datasets.__file__)"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout.strip()
    assert Path(out).resolve() == (ROOT / "datasets" / "__init__.py").resolve()


def test_huggingface_datasets_not_in_the_environment() -> None:
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        importlib.metadata.version("datasets")


def test_no_framework_dependency_requires_it() -> None:
    offenders = []
    for dist in importlib.metadata.distributions():
        for req in dist.requires or []:
            name = req.split(";")[0].split("[")[0].split("<")[0].split(">")[0].split("=")[0].split("!")[0].strip()
            if name.lower() == "datasets" and "extra ==" not in req:
                offenders.append(dist.metadata["Name"])
    assert not offenders, f"these installed packages require HuggingFace `datasets`: {offenders}"


def test_epbench_loader_counts(data_dir) -> None:
    from memeval.datasets.epbench import EpBenchLoader

    d20 = EpBenchLoader(20, str(data_dir)).load()
    assert len(d20.corpora["epbench20"].units) == 19 and len(d20.questions) == 456
    assert d20.natural_cap.max_units == 3 and len({q.id for q in d20.questions}) == 456
    d200 = EpBenchLoader(200, str(data_dir)).load()
    assert len(d200.corpora["epbench200"].units) == 196 and len(d200.questions) == 686
    assert d200.natural_cap.max_units == 17 and any("reconstructed" in n for n in d200.notes)
    buckets = [q.attrs["bucket"] for q in d200.questions]
    assert [buckets.count(b) for b in ("0", "1", "2", "3-5", "6+")] == [180, 180, 108, 128, 90]
    full = next(q for q in d20.questions if q.attrs["retrieval_type"] == "Full event details")
    assert full.gold[0].startswith("Full chapter") and full.gold_units
