"""Run health where methods and evaluation meet: the method's own index counters and no-context
markers, handed as plain data to evaluation/health, and RUN_DIR/health.json written.

Used by the score stage (harness/pipeline.py) and `memeval health` (cli/health.py). The index
folder is the one index.json records; a run folder moved into a bundle finds it under the
bundle's indexes/ (results/<bundle>/runs/<dataset>/<run> -> results/<bundle>/indexes/<name>).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hydra.utils import get_class

from memeval.evaluation.health.run import check_run
from memeval.evaluation.runs.folder import RunFolder
from memeval.evaluation.runs.health_file import Health
from memeval.evaluation.runs.upgrade import read_config
from memeval.methods.base import MemoryMethod


def method_class(run: Path) -> type[MemoryMethod]:
    return get_class(str(read_config(run).method._target_))


def index_folder(run: Path, recorded: str | None, corpora: tuple[str, ...] = ()) -> Path | None:
    """The run's index folder: as recorded (absolute, or relative to the working directory or to
    the project root above runs/<dataset>/<run>), else beside the runs (runs/_indexes/<name>, the
    default index root: a regrade made before it kept its index there recorded a scratch folder),
    else the bundle's indexes/<name>. The first that holds every one of `corpora` wins: a folder
    of the same name under the working directory may be another dataset's (one index folder per
    parameter set), and reading it left the run's index unchecked."""
    if not recorded:
        return None
    path = Path(recorded)
    parents = run.resolve().parents
    top = parents[2] if len(parents) > 2 else None  # above runs/<dataset>/<run>
    candidates = [path] if path.is_absolute() else [path, *([top / path] if top else [])]
    if len(parents) > 1:
        candidates.append(parents[1] / "_indexes" / path.name)
    if top is not None:
        candidates.append(top / "indexes" / path.name)
    found = [c for c in candidates if c.is_dir()]
    return next((c for c in found if all((c / cid).is_dir() for cid in corpora)), found[0] if found else None)


def _overrides(cls: type[MemoryMethod], name: str) -> bool:
    """Does the method define its own `name` (a classmethod the base leaves at None)?"""
    return getattr(cls, name).__func__ is not getattr(MemoryMethod, name).__func__


def index_view(run: Path, cls: type[MemoryMethod]) -> dict[str, Any]:
    """What evaluation/health's index checks read: does the method extract, its counters per
    corpus and (`claims`) each corpus's stored claims as plain dicts (None: its layout not read;
    no `claims` key: nothing extracted, the index is the text), for the support check."""
    extracts = _overrides(cls, "index_counters")
    info = json.loads((run / "index.json").read_text(encoding="utf-8")) if (run / "index.json").exists() else {}
    recorded = info.get("index_folder")
    view: dict[str, Any] = {"extracts": extracts, "folder": recorded, "corpora": {},
                            "prompt_examples": list(cls.prompt_examples)}  # example_phrases.py
    if not extracts and not _overrides(cls, "index_claims"):
        return view
    root = index_folder(run, recorded, tuple(str(c["corpus_id"]) for c in info.get("corpora", [])))
    view["claims"] = {}
    for c in info.get("corpora", []):
        cid = str(c["corpus_id"])
        folder = root / cid if root is not None and (root / cid).is_dir() else None
        claims = cls.index_claims(folder) if folder is not None else None
        view["claims"][cid] = None if claims is None else [claim.to_dict() for claim in claims]
        if extracts:
            counters = cls.index_counters(folder) if folder is not None else None
            view["corpora"][cid] = None if counters is None else counters.to_dict()
    return view


def run_health(run: Path, thresholds: dict[str, Any], dataset: Any = None) -> Health:
    """`dataset`: the run's benchmark data where the caller already holds it (else it is read)."""
    cls = method_class(run)
    return check_run(run, thresholds, index_view(run, cls), tuple(cls.no_context_markers), dataset,
                     tuple(cls.context_labels))


def write_health(run: Path, thresholds: dict[str, Any], dataset: Any = None) -> Health:
    """Check the run and write RUN_DIR/health.json (its own artifact; metrics.json is untouched)."""
    health = run_health(run, thresholds, dataset)
    RunFolder(run).write_json("health.json", health.to_dict())
    return health
