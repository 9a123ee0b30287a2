"""Known sha256 of every benchmark file, and the check that refuses a file that differs.

One manifest is the single source of truth for the data step (scripts/fetch_data.py) and the
loaders. Hashes are from ../shared/data/SOURCES.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from memeval.model_access.errors import ConfigError

EPB = "epbench/Udefault_Sdefault_seed0"
BOOK20 = f"{EPB}/books/model_claude-3-5-sonnet-20240620_itermax_10_Idefault_nbchapters_19_nbtokens_10397"
BOOK200 = f"{EPB}/books/model_claude-3-5-sonnet-20240620_itermax_10_Idefault_nbchapters_196_nbtokens_102870"
BOOK2000 = f"{EPB}/books/model_claude-3-5-sonnet-20240620_itermax_10_Idefault_nbchapters_1967_nbtokens_1033475"
EPBENCH_FIGSHARE = "https://figshare.com/ndownloader/articles/28244480"


@dataclass(frozen=True)
class DataFile:
    path: str
    sha256: str | None  # None: no reference hash exists (the file is reported as unverified)
    status: str  # original | reconstructed | unverified | derived
    url: str | None = None
    optional: bool = False  # the data step may lack it (no download source); its reader says so


MANIFEST: dict[str, DataFile] = {f.path: f for f in [
    DataFile(f"{EPB}/events.json", "2a706fbe6c8be2cd19cba935134c68a8d775f6b1db463ae6d8b6cf4ffe2f33c1", "original"),
    DataFile(f"{EPB}/meta_events.json", "10f1bff916a43b610588967381f2b730739a8c8e1c4fe07c37f4888940b2781c", "original"),
    DataFile(f"{BOOK20}/book.json", "95b71880b7ffab7d1e6c2dbeb525a62f385e87cedbd27dd9ed6c0dbe9d0b361d", "original"),
    DataFile(f"{BOOK20}/df_book_groundtruth.parquet", "43be254350852537dce16ee2e2e992e03ab03f4d60cd9ce0c68f8c555ae9e3b0", "original"),
    DataFile(f"{BOOK20}/df_qa.parquet", "efb5255595b165da69d3c8681d68a03ad28ea3650f96af916ca1a4fd7555d221", "original"),
    DataFile(f"{BOOK20}/df_qa_debug_widespreadness.parquet", "83d21193ae33a893de21e945523ddf2e072eeb41a6538303fb5be8dfa525ba6a", "original"),
    DataFile(f"{BOOK200}/book.json", "378cac8b7302b3cc10dc44afa39e2afff46db55b2f3335e67a0f514a00be595a", "reconstructed"),
    DataFile(f"{BOOK200}/df_qa.parquet", "7d8df84f32f75fd205857be65df774532e544f2c0a58f7480311f623034e54d0", "reconstructed"),
    DataFile(f"{BOOK200}/df_qa_debug_widespreadness.parquet", "caa27f313069a2ace6b8b111b4381fdc7d1fe08daaceb27b54a34792e5241ef7", "reconstructed"),
    DataFile("locomo/locomo10.json", "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4", "original",
             "https://raw.githubusercontent.com/snap-research/LoCoMo/main/data/locomo10.json"),
    DataFile("locomo/audit/gold_audit.jsonl", "78b3bba45dd0dafc0aa88cd5af39ab260f2e6ad54e0b703c3293e66f1cd104ed",
             "derived", optional=True),
    DataFile("locomo/audit/known_wrong_answers.jsonl",
             "a626aff598ce8c19533385c5e9dd0aebfcac91d96d6b9890968e28c8ccedf204", "derived", optional=True),
    DataFile("longmemeval/longmemeval_oracle.json", "821a2034d219ab45846873dd14c14f12cfe7776e73527a483f9dac095d38620c", "original"),
    DataFile("longmemeval/longmemeval_s_cleaned.partial.json.gz", "4ce8d5085377debceed2abc3aaa09239745b02f7b1e500b6b95d6846b56a9c2d", "unverified"),
]}

_STAMP = ".verified.json"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(root: Path, rel: str) -> DataFile:
    """Check one file against the manifest; remember good (size, mtime) to skip rehashing."""
    entry = MANIFEST.get(rel)
    path = root / rel
    if not path.exists():
        raise ConfigError(
            f"Benchmark file missing: {path}. Run `python scripts/fetch_data.py` (copies from "
            f"../shared/data or downloads from the official source) or set data_dir=... ."
        )
    if entry is None or entry.sha256 is None:
        return entry or DataFile(rel, None, "unverified")
    stamp_path = path.parent / _STAMP
    stamps = json.loads(stamp_path.read_text()) if stamp_path.exists() else {}
    st = path.stat()
    sig = [st.st_size, st.st_mtime_ns, entry.sha256]
    if stamps.get(path.name) == sig:
        return entry
    actual = sha256_of(path)
    if actual != entry.sha256:
        raise ConfigError(
            f"Checksum mismatch for {path}: expected sha256 {entry.sha256}, got {actual}. "
            "The file is corrupt or a different version; delete it and rerun "
            "`python scripts/fetch_data.py`."
        )
    stamps[path.name] = sig
    with contextlib.suppress(OSError):  # a read-only data folder: verification still happened
        stamp_path.write_text(json.dumps(stamps))
    return entry
