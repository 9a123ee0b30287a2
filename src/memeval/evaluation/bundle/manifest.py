"""The bundle's manifest (sha256 of every file), its secret scan, and its README.

Why hashes of every file: verify and import check them before trusting anything, so a bundle
edited or damaged after export (a metrics.json changed by hand, a truncated calls file) is
refused by name instead of replayed. Why a secret scan: config.yaml is redacted by the harness,
but a bundle is meant to be published, so the values of the environment's key variables are
searched for in every byte (the calls file decompressed) before the bundle is written.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from ..agreement import judge_block

FORMAT = "memeval-bundle/1"
MANIFEST = "manifest.json"
CALLS = "calls.jsonl.gz"
_SECRET_VAR = re.compile(r"(API_?KEY|SECRET|TOKEN|PASSWORD)", re.IGNORECASE)

OWN_DATA = "your own data (custom dataset): its licence is yours to state"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_hashes(root: Path) -> dict[str, str]:
    """{posix path relative to root: sha256} for every file but the manifest itself."""
    rels = (p.relative_to(root).as_posix() for p in sorted(root.rglob("*")) if p.is_file())
    return {rel: sha256_file(root / rel) for rel in rels if rel != MANIFEST}


def holds_run(run: Path) -> bool:
    """Whether a run folder is one of a bundle's (BUNDLE/runs/DATASET/RUN beside BUNDLE/manifest.json):
    its files are then the bundle's, which only export writes and verify checks."""
    parents = run.resolve().parents
    return len(parents) > 2 and parents[1].name == "runs" and (parents[2] / MANIFEST).is_file()


def load_manifest(bundle: Path) -> dict[str, Any]:
    path = bundle / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"{bundle} is not a result bundle: no {MANIFEST}")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{path}: format {manifest.get('format')!r}, expected {FORMAT!r}")
    return manifest


def check_files(bundle: Path, manifest: dict[str, Any]) -> list[str]:
    """Every listed file present with its sha256; problems as lines naming the file."""
    problems = []
    for rel, digest in manifest["files"].items():
        path = bundle / rel
        if not path.is_file():
            problems.append(f"missing: {rel}")
        elif sha256_file(path) != digest:
            problems.append(f"sha256 mismatch (changed since export): {rel}")
    return problems


def unlisted(bundle: Path, manifest: dict[str, Any]) -> list[str]:
    listed = set(manifest["files"]) | {MANIFEST}
    return [p.relative_to(bundle).as_posix() for p in sorted(bundle.rglob("*"))
            if p.is_file() and p.relative_to(bundle).as_posix() not in listed]


def secret_leaks(root: Path) -> list[str]:
    """Files under root holding the value of any secret-named environment variable."""
    secrets = [v.encode() for k, v in os.environ.items() if _SECRET_VAR.search(k) and len(v) >= 8]
    if not secrets:
        return []
    leaks = []
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        data = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        leaks += [p.relative_to(root).as_posix() for s in secrets if s in data][:1]
    return leaks


def data_licence(loader_target: str | None) -> tuple[str, str]:
    """(the dataset plugin's registered name, the licence its loader class states) for a run's
    `dataset.loader._target_` (a saved path read as today's); a loader stating none: your own."""
    from memeval.plugins import plugin_of_class

    from ..runs.upgrade import current_target

    found = plugin_of_class("dataset", str(current_target(loader_target))) if loader_target else None
    if found is None:
        return str(loader_target or "?"), OWN_DATA
    return found.name, getattr(found.load(), "licence", None) or OWN_DATA


def judge_agreement(metrics: dict[str, Any]) -> str:
    """One phrase: how the run's LLM judge lines up with a model-free check (its raw verdicts: the
    grounded credit is partly built from the matcher, evaluation.agreement.judge_block)."""
    saved = metrics.get("agreement")
    agree: Any = judge_block(saved) or saved
    if isinstance(agree, dict) and agree.get("n_items") is not None:
        item, q = agree.get("item_agreement"), agree.get("question_agreement")
        own_block = agree is saved  # the block itself, not its other_credit.raw
        who = "judge (raw)" if not own_block or agree.get("credit") == "raw" else \
            f"{agree.get('credit', '?')} credit"
        return (f"{who} vs deterministic matcher: {_pct(item)} of {agree['n_items']} gold items, "
                f"{_pct(q)} of {agree.get('n_questions')} questions agree")
    jf = metrics.get("judge_f1")
    if isinstance(jf, dict):
        credit = str(metrics.get("credit") or "raw")
        d: Any = jf.get(credit) or next(iter(jf.values()), {})
        if isinstance(d, dict) and "agreement" in d:
            auc = d.get("auc")
            return (f"{credit} judge vs token F1 >= {d.get('threshold')}: {_pct(d.get('agreement'))} of "
                    f"{d.get('n')} answers agree, AUC {'n/a' if auc is None else f'{auc:.2f}'}")
    return "n/a"


def _pct(x: Any) -> str:
    return "n/a" if x is None else f"{100 * float(x):.0f}%"
