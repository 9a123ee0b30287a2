"""The run folder: one per method x dataset x config, each stage writing its own artifact."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

_SECRET = re.compile(r"(api_?key|secret|token|password|authorization)$", re.IGNORECASE)
REDACTED = "***redacted***"


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


class RunFolder:
    """Paths and atomic writers for a run's artifacts."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def __truediv__(self, name: str) -> Path:
        return self.root / name

    def write_json(self, name: str, obj: Any) -> Path:
        path = self.root / name
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(_finite(obj), indent=2, ensure_ascii=False, default=_num) + "\n",
                       encoding="utf-8")
        tmp.replace(path)
        return path

    def read_json(self, name: str) -> Any:
        return json.loads((self.root / name).read_text(encoding="utf-8"))

    def write_text(self, name: str, text: str) -> Path:
        path = self.root / name
        path.write_text(text, encoding="utf-8")
        return path

    def write_config(self, cfg: DictConfig) -> Path:
        resolved = OmegaConf.to_container(cfg, resolve=True)
        return self.write_text("config.yaml", OmegaConf.to_yaml(OmegaConf.create(redact(resolved))))

    def read_jsonl(self, name: str) -> list[dict[str, Any]]:
        path = self.root / name
        if not path.exists():
            return []
        rows = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rows.append(json.loads(line))
        return rows

    def write_jsonl(self, name: str, rows: Iterable[dict[str, Any]]) -> Path:
        path = self.root / name
        tmp = path.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False, default=_num) + "\n")
        tmp.replace(path)
        return path


class JsonlAppender:
    """Appends one line per finished question and flushes, so a crash keeps finished work."""

    def __init__(self, path: Path):
        self.path = path
        self._f = path.open("a", encoding="utf-8")

    def add(self, row: dict[str, Any]) -> None:
        self._f.write(json.dumps(row, ensure_ascii=False, default=_num) + "\n")
        self._f.flush()

    def close(self) -> None:
        self._f.close()


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
