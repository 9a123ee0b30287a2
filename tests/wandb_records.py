"""Reads the records of an offline W&B run file (.wandb: a LevelDB-style log of protobuf
Records), so tests can check what a later `wandb sync` would upload without any network."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

BLOCK = 32768
HEADER = 7  # ":W&B", magic 0xBEE1, version


def records(path: Path) -> list[Any]:
    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B", f"{path} is not a W&B run file"
    out, pos, parts = [], HEADER, b""
    while pos + 7 <= len(data):
        left = BLOCK - pos % BLOCK
        if left < 7:  # block trailer padding
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if length == 0 and kind == 0:
            pos += left
            continue
        chunk = data[pos + 7:pos + 7 + length]
        pos += 7 + length
        parts = chunk if kind in (1, 2) else parts + chunk
        if kind in (1, 4):  # FULL or LAST
            rec = pb.Record()
            rec.ParseFromString(parts)
            out.append(rec)
            parts = b""
    return out


def summary(path: Path) -> dict[str, Any]:
    """Run header and the keys logged: {"run": Record.run, "summary": set, "history": set, ...}."""
    found: dict[str, Any] = {"run": None, "summary": set(), "history": set(), "artifacts": []}
    for r in records(path):
        kind = r.WhichOneof("record_type")
        if kind == "run":
            found["run"] = r.run
        elif kind == "summary":
            found["summary"] |= {u.key or "/".join(u.nested_key) for u in r.summary.update}
        elif kind == "history":
            found["history"] |= {i.key or "/".join(i.nested_key) for i in r.history.item}
        elif kind == "artifact":
            found["artifacts"].append(r.artifact)
    return found
