"""The run folder: one per method x dataset x config, each stage writing its own artifact.

A bundled run folder may hold a large JSONL artifact packed (`predictions.jsonl.xz`: a vanilla
run's 200 contexts repeat one 50 kB book, 10.5 MB as text, 37 kB packed); `read_jsonl` and
`has` read a packed file as its plain name, so no reader needs to know. Packed files are
read-only: a run being written never packs.

The typed records (predictions and judgments lines, meta.json, metrics.json: records.py) are
checked here, where every reader and writer passes: a malformed one is a RecordError naming the
file, line and field, and a written one goes through its model (the same bytes).
"""

from __future__ import annotations

import hashlib
import json
import logging
import lzma
import math
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from .records import as_written, checked, checked_rows, record_for

log = logging.getLogger("memeval")
_SECRET = re.compile(r"(api_?key|secret|token|password|authorization)$", re.IGNORECASE)
REDACTED = "***redacted***"
PACKED = ".xz"  # the suffix of a packed artifact (a bundle's copy; cli/bundle/export.py packs)


def artifact(path: Path) -> Path:
    """`path`, or its packed copy where only that exists."""
    packed = path.with_name(path.name + PACKED)
    return packed if not path.exists() and packed.exists() else path


def redact(obj: Any) -> Any:
    """Blank every value whose key names a secret; `*_env` keys hold variable names and stay."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if isinstance(k, str) and _SECRET.search(k) and not k.endswith("_env") and v not in (None, ""):
                out[k] = REDACTED
            else:
                out[k] = redact(v)
        return out
    if isinstance(obj, list):
        return [redact(v) for v in obj]
    return obj


def config_hash(parts: dict[str, Any]) -> str:
    blob = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:10]


def json_text(obj: Any) -> str:
    """A JSON artifact's exact text (what write_json writes, and what a replay is compared by)."""
    return json.dumps(_finite(obj), indent=2, ensure_ascii=False, default=_num) + "\n"


def _atomic_write(path: Path, data: str) -> Path:
    """Write a sibling temp file, fsync it, then rename over `path`: readers (and a resumed run
    after a kill or power loss) see the old file or the new one, never half of one."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)
    return path


def read_jsonl_file(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSONL file. A torn last line (a write cut short by a kill or power loss) is
    reported, cut off the file and dropped, and the warning says what redoes it (`redone_by`); a bad line
    anywhere else is corruption and raises, naming the file and line. A packed copy
    (`NAME.xz`, a bundle's) is read as the file itself; it is never repaired. A typed record's
    rows (predictions, judgments: records.py) are checked, a malformed one naming its line."""
    source = artifact(path)
    if not source.exists():
        return []
    if source != path:
        rows = [json.loads(line) for line in lzma.decompress(source.read_bytes()).split(b"\n") if line.strip()]
        return _checked(path, rows)
    return _checked(path, _read_plain(path))


def _checked(path: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows, each checked when the file is a typed record (records.py); as read."""
    return checked_rows(path.name, rows, path) if record_for(path.name) is not None else rows


def _read_plain(path: Path) -> list[dict[str, Any]]:
    """A plain file's rows, its torn last line cut off (see read_jsonl_file)."""
    lines = path.read_bytes().split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline, as every complete write does
    rows: list[dict[str, Any]] = []
    for i, line in enumerate(lines, 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise ValueError(f"{path}: line {i} is not valid JSON ({exc}); the file is corrupt "
                                 "(not just a torn last line): delete it to redo that stage") from exc
    if not tail.strip():
        return rows
    try:  # a JSON object parses only when complete: this last line lacks just its newline
        rows.append(json.loads(tail))
        with path.open("ab") as f:
            f.write(b"\n")
    except ValueError:
        log.warning("%s: dropped a torn last line (%d bytes, cut off by an interrupted write); %s",
                    path, len(tail), redone_by(path.name))
        with path.open("r+b") as f:
            f.truncate(sum(len(x) + 1 for x in lines))
    return rows


# the stage that writes each per-question file: rerunning it redoes a dropped line
_STAGE_OF = {"predictions.jsonl": ("answer", "answer"), "judgments.jsonl": ("judge", "verdict")}


def redone_by(name: str) -> str:
    """What redoes a dropped line of the file `name` (the stage that owns it), as the warning says."""
    if name in _STAGE_OF:
        stage, what = _STAGE_OF[name]
        return (f"that question has no {what} until the {stage} stage runs again: rerun the same "
                "`memeval run` command (cached calls are free); until then `memeval rescore` refuses "
                "the run as partial")
    if name == "diagnostics.jsonl" or name.startswith("judge_disagreements"):
        return "`memeval rescore RUN_DIR` writes the file again"
    return "rerunning the stage that writes this file redoes that row"


class RunFolder:
    """Paths and atomic writers for a run's artifacts."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def __truediv__(self, name: str) -> Path:
        return self.root / name

    def write_json(self, name: str, obj: Any) -> Path:
        if record_for(name) is not None:
            obj = as_written(name, obj, str(self.root / name))
        return _atomic_write(self.root / name, json_text(obj))

    def read_json(self, name: str) -> Any:
        obj = json.loads((self.root / name).read_text(encoding="utf-8"))
        if record_for(name) is not None:
            checked(name, obj, str(self.root / name))
        return obj

    def write_text(self, name: str, text: str) -> Path:
        return _atomic_write(self.root / name, text)

    def write_config(self, cfg: DictConfig) -> Path:
        resolved = OmegaConf.to_container(cfg, resolve=True)
        return self.write_text("config.yaml", OmegaConf.to_yaml(OmegaConf.create(redact(resolved))))

    def has(self, name: str) -> bool:
        """Whether the artifact is here, plain or packed."""
        return artifact(self.root / name).exists()

    def read_jsonl(self, name: str) -> list[dict[str, Any]]:
        return read_jsonl_file(self.root / name)

    def write_jsonl(self, name: str, rows: Iterable[dict[str, Any]]) -> Path:
        if record_for(name) is not None:
            rows = [as_written(name, r, _new_line(self.root / name, r)) for r in rows]
        return _atomic_write(self.root / name,
                             "".join(json.dumps(r, ensure_ascii=False, default=_num) + "\n" for r in rows))


class JsonlAppender:
    """Appends one line per finished question, each with a single write() to an O_APPEND file:
    a kill lands before or after a line, never inside it (a power loss can still tear the last
    line, which read_jsonl_file detects and drops)."""

    def __init__(self, path: Path):
        self.path = path
        read_jsonl_file(path)  # cut a torn tail first, so new lines never glue onto it
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def add(self, row: dict[str, Any]) -> None:
        assert self._fd is not None, "appender is closed"
        if record_for(self.path.name) is not None:
            row = as_written(self.path.name, row, _new_line(self.path, row))
        data = (json.dumps(row, ensure_ascii=False, default=_num) + "\n").encode("utf-8")
        written = os.write(self._fd, data)
        while written < len(data):  # regular files take the whole buffer; this is belt and braces
            written += os.write(self._fd, data[written:])

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _new_line(path: Path, row: Any) -> str:
    """Where a line about to be written goes, for its error message."""
    qid = row.get("question_id") if isinstance(row, dict) else None
    return f"{path}: the line for question {qid!r}" if qid is not None else f"{path}: a new line"


def _finite(obj: Any) -> Any:
    """NaN (an undefined mean) becomes null, so artifacts are strict JSON."""
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def _num(o: Any) -> Any:
    if hasattr(o, "item"):
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
