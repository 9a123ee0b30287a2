"""Small scripted run folders for the report, W&B and notebook tests: one sweep, made once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import _data_dir, run_cli, scripted_overrides
from scripted_server import ScriptedServer

METHODS = ("vanilla", "embedding_rag", "embedding_rag_paragraph")
_CACHE: dict[str, Path] = {}


def sweep_root(tmp_root: Path) -> Path:
    """runs/epbench20/<method>-<hash> for three methods (6 questions each) and the sweep folder."""
    if "root" not in _CACHE:
        with ScriptedServer() as server:
            r = run_cli(["-m", f"method={','.join(METHODS)}", "dataset=epbench20", "subset.n=6",
                         *scripted_overrides(server, tmp_root, _data_dir())])
        assert r.returncode == 0, r.stderr[-3000:]
        _CACHE["root"] = tmp_root
    return _CACHE["root"]


def run_dir(root: Path, method: str) -> Path:
    (found,) = sorted((root / "runs" / "epbench20").glob(f"{method}-*"))
    return found


def sweep_dirs(root: Path) -> list[Path]:
    return sorted(p for p in (root / "runs" / "_multirun").iterdir() if p.is_dir())


def perfect_copy(src: Path, dst: Path, method: str) -> Path:
    """A copy of `src` (without its health.json: a constructed run, unchecked) whose judge credited every gold item (and nothing on 0-cue questions),
    rescored: a constructed run that is better than `src` on every question with gold items."""
    from memeval.evaluation.runs.folder import RunFolder
    from memeval.evaluation.runs.scoring import score_run

    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("wandb", "health.json"))
    run = RunFolder(dst)
    lines = run.read_jsonl("judgments.jsonl")
    for j in lines:
        j["identified_items"] = list(j["gold"])
        j["matching_score"] = [1.0] * len(j["gold"])
        for k in ("identified_items_grounded", "matching_score_grounded", "n_pred_grounded"):
            j.pop(k, None)
    run.write_jsonl("judgments.jsonl", lines)
    meta = json.loads((dst / "meta.json").read_text())
    meta["method"] = method
    run.write_json("meta.json", meta)
    score_run(run)
    return dst
