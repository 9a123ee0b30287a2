"""Our packages live under one namespace, `memeval`: the generic top-level names are free, so
Hugging Face's `datasets` (a researcher's environment usually has it) imports beside ours."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_only_the_namespace_is_a_top_level_package() -> None:
    """No package of ours sits at the repository root or beside src/memeval (e.g. `datasets/`)."""
    for base in (ROOT, ROOT / "src"):
        packages = sorted(p.name for p in base.iterdir() if (p / "__init__.py").is_file())
        assert packages == ([] if base == ROOT else ["memeval"]), (base, packages)


def test_a_third_party_datasets_package_imports_beside_ours(tmp_path: Path) -> None:
    """A stand-in for Hugging Face's `datasets` on the path: `import datasets` finds it, and
    `memeval.datasets` (our loaders) still imports, each from its own file."""
    fake = tmp_path / "datasets"
    fake.mkdir()
    (fake / "__init__.py").write_text("def load_dataset(name):\n    return name\n")
    code = ("import datasets, memeval.datasets.epbench as ours\n"
            "print(datasets.__file__); print(ours.__file__); print(datasets.load_dataset('x'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=tmp_path, env={"PYTHONPATH": f"{tmp_path}:{ROOT / 'src'}", "PATH": "/usr/bin:/bin"})
    theirs, ours, called = out.stdout.split()
    assert Path(theirs) == fake / "__init__.py"
    assert Path(ours).resolve() == (ROOT / "src" / "memeval" / "datasets" / "epbench.py").resolve()
    assert called == "x"


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
