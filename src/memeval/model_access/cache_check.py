"""`memeval cache check`: find the entries of a model-call cache that cannot be read and set them
aside, keeping every good entry.

Why: a cache is months of paid calls; a damaged page or a torn entry used to stop every run and
`cache stats` with SQLite's own error, which named neither the file nor a way out. Nothing here is
deleted: bad rows go to a sibling quarantine file, and a file SQLite cannot read as a whole is
moved aside intact while the rows that can still be read are copied into a new file at its path.

SQLite (`cache_backend: sqlite`): `PRAGMA integrity_check`, then every row read as bytes (a value
that is not UTF-8 JSON of an object is bad). A file that fails the check, or cannot be opened, is
recovered row by row (scans from both ends of the table, then a lookup per row id in between, so
only the rows on damaged pages are lost). Folder (`cache_backend: directory`): every entry file is
read; one that is not JSON of an object, or lies outside its key's place, moves to
`quarantine/` under the folder. Run it when no run is using the cache.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .cache import ResponseCache, damaged

MAX_PROBES = 5_000_000  # row ids looked up one by one between the readable ends of a damaged table
TABLE = "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


@dataclass
class CheckResult:
    """What a check found and did; `clean` when the cache needed nothing."""

    cache: str
    backend: str
    entries: int = 0  # entries read (good and bad)
    good: int = 0  # entries kept in the cache
    quarantined: int = 0  # entries moved to the quarantine file or folder
    lost: int = 0  # rows a damaged file no longer lets anyone read (estimated from row ids)
    integrity: str = "ok"  # PRAGMA integrity_check's verdict (its first line), or why it could not run
    moved_aside: str | None = None  # where a damaged file was moved, intact
    quarantine: str | None = None

    @property
    def clean(self) -> bool:
        return not (self.quarantined or self.lost or self.moved_aside)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _good_value(raw: Any) -> bool:
    """A stored value is good when it is UTF-8 text holding a JSON object (what every client stores)."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            return False
    if not isinstance(raw, str):
        return False
    try:
        return isinstance(json.loads(raw), dict)
    except ValueError:
        return False


def _key_text(raw: Any) -> str | None:
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return raw if isinstance(raw, str) and raw else None


def quarantine_path(path: Path) -> Path:
    return path.with_name(path.name + ".quarantine.sqlite")


def _quarantine(path: Path, rows: list[tuple[Any, Any]]) -> None:
    """Append bad rows, as they were (bytes), to the quarantine file beside the cache."""
    db = sqlite3.connect(str(quarantine_path(path)))
    try:
        db.execute("CREATE TABLE IF NOT EXISTS quarantined (key BLOB, value BLOB, found TEXT)")
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        db.executemany("INSERT INTO quarantined VALUES (?, ?, ?)", [(k, v, now) for k, v in rows])
        db.commit()
    finally:
        db.close()


def _integrity(path: Path) -> str:
    """PRAGMA integrity_check's first line ("ok" for a sound file), or the damage that stopped it.
    Any other error (a locked file: a run is using it) is raised: nothing is moved then."""
    db = sqlite3.connect(str(path), timeout=10)
    try:
        rows = db.execute("PRAGMA integrity_check").fetchall()
        db.execute("SELECT COUNT(*) FROM responses").fetchone()
        return str(rows[0][0]) if rows else "no answer"
    except sqlite3.Error as exc:
        if not damaged(exc):
            raise
        return str(exc)
    finally:
        db.close()


def _scan(db: sqlite3.Connection, order: str, after: int | None) -> tuple[list[tuple[int, Any, Any]], bool]:
    """Rows by row id in `order` from `after` until the first error: (rows, finished)."""
    rows: list[tuple[int, Any, Any]] = []
    op = ">" if order == "ASC" else "<"
    sql = (f"SELECT rowid, CAST(key AS BLOB), CAST(value AS BLOB) FROM responses "
           f"{'WHERE rowid ' + op + ' ?' if after is not None else ''} ORDER BY rowid {order}")
    try:
        for row in db.execute(sql, (after,) if after is not None else ()):
            rows.append(row)
    except sqlite3.Error:
        return rows, False
    return rows, True


def _readable_rows(path: Path) -> tuple[list[tuple[Any, Any]], int]:
    """Every row of a damaged file that can still be read, and how many row ids in its range could not."""
    try:
        db = sqlite3.connect(str(path), timeout=10)
        forward, done = _scan(db, "ASC", None)
    except sqlite3.Error:
        return [], 0
    try:
        found = {r[0]: r for r in forward}
        lost = 0
        if not done:
            backward, _ = _scan(db, "DESC", None)
            found.update((r[0], r) for r in backward)
            low = max((r[0] for r in forward), default=0)
            high = min((r[0] for r in backward if r[0] > low), default=low)
            for rowid in range(low + 1, min(high, low + 1 + MAX_PROBES)):
                try:
                    row = db.execute("SELECT rowid, CAST(key AS BLOB), CAST(value AS BLOB) FROM responses "
                                     "WHERE rowid = ?", (rowid,)).fetchone()
                except sqlite3.Error:
                    lost += 1
                    continue
                if row is not None:
                    found[row[0]] = row
        return [(k, v) for _, k, v in sorted(found.values(), key=lambda r: r[0])], lost
    finally:
        db.close()


def _sidecars(path: Path) -> list[Path]:
    return [path.with_name(path.name + s) for s in ("-wal", "-shm")]


def check_sqlite(path: Path) -> CheckResult:
    """Check an SQLite cache; repair it as the module docstring says."""
    result = CheckResult(str(path), "sqlite", quarantine=str(quarantine_path(path)))
    result.integrity = _integrity(path)
    if result.integrity == "ok":
        return _sound_file(path, result)
    rows, result.lost = _readable_rows(path)
    good, bad = _split(rows)
    # the recovered file is written whole beside the cache first, so a kill never leaves the good
    # rows only in the damaged file
    staged = path.with_name(path.name + ".recovering")
    for stale in (staged, *_sidecars(staged)):
        stale.unlink(missing_ok=True)
    fresh = ResponseCache(staged)  # a new file, made as every run makes it
    fresh.close()
    db = sqlite3.connect(str(staged))
    try:
        db.executemany("INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)", good)
        db.commit()
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    os.replace(path, aside)
    for side in _sidecars(path):  # the write-ahead log belongs to the damaged file
        if side.exists():
            os.replace(side, side.with_name(aside.name + side.name[len(path.name):]))
    for side in _sidecars(staged):
        side.unlink(missing_ok=True)
    os.replace(staged, path)
    Path(f"{staged}.init-lock").unlink(missing_ok=True)
    result.moved_aside = str(aside)
    if bad:
        _quarantine(path, bad)
    result.entries, result.good, result.quarantined = len(rows), len(good), len(bad)
    return result


def _split(rows: list[tuple[Any, Any]]) -> tuple[list[tuple[str, str]], list[tuple[Any, Any]]]:
    good: list[tuple[str, str]] = []
    bad: list[tuple[Any, Any]] = []
    for key, value in rows:
        text = _key_text(key)
        if text is not None and _good_value(value):
            good.append((text, value.decode("utf-8") if isinstance(value, bytes) else value))
        else:
            bad.append((key, value))
    return good, bad


def _sound_file(path: Path, result: CheckResult) -> CheckResult:
    """A file SQLite reads whole: move the rows that are not readable entries to quarantine."""
    db = sqlite3.connect(str(path))
    try:
        rows = db.execute("SELECT rowid, CAST(key AS BLOB), CAST(value AS BLOB) FROM responses").fetchall()
        bad = [(rowid, k, v) for rowid, k, v in rows if _key_text(k) is None or not _good_value(v)]
        if bad:
            _quarantine(path, [(k, v) for _, k, v in bad])
            db.executemany("DELETE FROM responses WHERE rowid = ?", [(rowid,) for rowid, _, _ in bad])
            db.commit()
    finally:
        db.close()
    result.entries, result.quarantined = len(rows), len(bad)
    result.good = len(rows) - len(bad)
    return result


def check_directory(root: Path) -> CheckResult:
    """Check a folder cache: each `??/??/<key>.json` must hold a JSON object under its key's place."""
    qdir = root / "quarantine"
    result = CheckResult(str(root), "directory", integrity="not applicable", quarantine=str(qdir))
    for entry in sorted(root.glob("??/??/*.json")):
        result.entries += 1
        key = entry.stem
        placed = entry.parent.name == key[2:4] and entry.parent.parent.name == key[:2]
        try:
            ok = placed and isinstance(json.loads(entry.read_text(encoding="utf-8")), dict)
        except (ValueError, UnicodeDecodeError, OSError):
            ok = False
        if ok:
            result.good += 1
            continue
        target = qdir / entry.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(entry, target)
        result.quarantined += 1
    return result


def check_cache(path: Path) -> CheckResult:
    """Check the cache at `path` (a folder: the directory backend; a file: SQLite)."""
    return check_directory(path) if path.is_dir() else check_sqlite(path)


def summary(result: CheckResult) -> str:
    """One line a user reads: what was found and where the bad entries went."""
    if result.clean:
        return f"cache {result.cache}: {result.entries} entries, all readable"
    parts = [f"cache {result.cache}: {result.good} of {result.entries} entries kept"]
    if result.quarantined:
        parts.append(f"{result.quarantined} unreadable set aside in {result.quarantine}")
    if result.lost:
        parts.append(f"{result.lost} rows on damaged pages could not be read")
    if result.moved_aside:
        parts.append(f"the damaged file ({result.integrity}) moved intact to {result.moved_aside}")
    return "; ".join(parts) + "; a run needing a call no longer cached pays for it again"
