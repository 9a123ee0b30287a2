"""Stored claims come from the method (`MemoryMethod.index_claims`), not from evaluation/health:
a method defined outside the core gets its claims checked, and the built-in methods read their
own bundled index folders (harness/health.py hands the claims over as plain dicts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from memeval.evaluation.health.stored import index_claims
from memeval.evaluation.health.support import support_checks
from memeval.evaluation.runs.health_file import load_thresholds
from memeval.evaluation.runs.upgrade import saved_dataset
from memeval.harness.health import index_folder, index_view, method_class
from memeval.methods.base import MemoryMethod, Retrieval
from memeval.methods.stored_claims import StoredClaim

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "Marla opened a small bakery on the harbour road. She bakes rye loaves every morning."


class NotebookMethod(MemoryMethod):
    """An out-of-tree method: it stores notes in notes.json and reads them back for health."""

    async def build_index(self, corpus: Any) -> Any:
        return None

    async def retrieve(self, index: Any, question: Any) -> Retrieval:
        return Retrieval("", [])

    @classmethod
    def index_claims(cls, folder: Path) -> list[StoredClaim] | None:
        notes = json.loads((folder / "notes.json").read_text())
        return [StoredClaim(n["text"], tuple(n["units"]), "note") for n in notes]


def _run(tmp_path: Path, notes: list[dict[str, Any]]) -> Path:
    run, index = tmp_path / "runs" / "toy" / "notebook-1", tmp_path / "idx"
    (index / "c").mkdir(parents=True)
    (index / "c" / "notes.json").write_text(json.dumps(notes))
    run.mkdir(parents=True)
    (run / "index.json").write_text(json.dumps({"index_folder": str(index), "corpora": [{"corpus_id": "c", "units": 1}]}))
    return run


def test_a_plugins_fabricated_claim_is_flagged(tmp_path: Path) -> None:
    run = _run(tmp_path, [{"text": "Marla bakes rye loaves every morning", "units": ["1"]},
                          {"text": "Marla sells pistachio gelato to tourists", "units": ["1"]}])
    view = index_view(run, NotebookMethod)
    dataset = SimpleNamespace(corpora={"c": SimpleNamespace(units=[SimpleNamespace(id="1", text=SOURCE, title=None,
                                                                                    timestamp=None)])})
    index, *_ = support_checks([], index_claims(view), dataset, (), (), load_thresholds())
    assert (index.scope, index.name, index.value, index.status) == ("index", "unsupported_claims", 0.5, "fail")
    assert "pistachio gelato" in index.message and "rye loaves" not in index.message


def test_a_method_that_reads_no_layout_gives_no_claims(tmp_path: Path) -> None:
    class Plain(NotebookMethod):
        index_claims = MemoryMethod.index_claims  # the base's: reads nothing

    assert index_claims(index_view(_run(tmp_path, []), Plain)) is None


BUNDLE = ROOT / "results" / "locomo-local" / "runs" / "locomo"


@pytest.mark.parametrize("prefix", ["gsw", "seem", "mem0", "lightrag", "hipporag2"])
def test_builtin_methods_read_their_bundled_index(prefix: str) -> None:
    """Each of the five reads claims from its own folder; where it records provenance, the
    units named are the conversation's sessions."""
    runs = sorted(BUNDLE.glob(f"{prefix}-*"))
    if not runs:
        pytest.skip(f"no {prefix} run in the locomo-local bundle")
    run = runs[0]
    info = json.loads((run / "index.json").read_text())
    cids = tuple(str(c["corpus_id"]) for c in info["corpora"])
    root = index_folder(run, info["index_folder"], cids)
    assert root is not None
    claims = method_class(run).index_claims(root / cids[0])
    assert claims and all(c.text.strip() for c in claims)
    dataset = saved_dataset(run)
    if dataset is None:
        pytest.skip("the LoCoMo data is not on this machine")
    sessions = {str(u.id) for u in dataset.corpora[cids[0]].units}
    assert all(u in sessions for c in claims for u in c.units or ())


def test_context_examples_read_the_same_in_every_process() -> None:
    """The context check's "most often" examples tie often (one sentence per context); their order
    must not follow the process's string hashing (health.json differed between two runs of
    `memeval health` on the same run folder)."""
    script = (
        "from types import SimpleNamespace as N\n"
        "from memeval.evaluation.health.support import context_support_check\n"
        "src = 'Marla opened a small bakery on the harbour road.'\n"
        "inv = ' '.join(f'Marla {w} {v} {x} daily.' for w, v, x in [('paints', 'blue', 'kites'), ('sells', 'fresh', 'tulips'),"
        " ('repairs', 'old', 'bicycles'), ('teaches', 'young', 'violinists'), ('feeds', 'stray', 'pelicans')])\n"
        "ds = N(corpora={'c': N(units=[N(id='1', text=src, title=None, timestamp=None)])})\n"
        "p = [{'question_id': 'q1', 'corpus_id': 'c', 'context_text': src + ' ' + inv}]\n"
        "th = {'claim_share': 0.2, 'min_content': 2, 'date_window': 7, 'warn': 0.05, 'fail': 0.2}\n"
        "print(context_support_check(p, ds, (), (), th).message)\n")
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONHASHSEED": str(seed)}) for seed in range(3)]
    messages = {p.communicate(timeout=120)[0] for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert len(messages) == 1 and "kites" in messages.pop()  # five tied examples: 60 orders of the first three
