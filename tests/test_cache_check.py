"""A damaged model-call cache: one line naming the file and the fix, and `memeval cache check`,
which sets bad entries aside without losing a good one (model_access/cache_check.py)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import run_cli, scripted_overrides

from memeval.model_access.cache import ResponseCache, cache_key
from memeval.model_access.cache_cli import main as cache_main
from memeval.model_access.cache_store import DirectoryCache


def _good_cache(path: Path, n: int) -> dict[str, dict]:
    """A cache of `n` entries, checkpointed into the main file (as after a finished run)."""
    entries = {cache_key({"i": i}): {"text": f"reply {i} " + "x" * 300, "prompt_tokens": i, "completion_tokens": 1}
               for i in range(n)}
    cache = ResponseCache(path)
    for key, value in entries.items():
        cache.put(key, value)
    cache.close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return entries


def _damage_pages(path: Path, page: int = 5) -> None:
    data = bytearray(path.read_bytes())
    start = 4096 * page
    data[start:start + 3000] = b"\xa5" * 3000
    path.write_bytes(bytes(data))


def _expected(path: Path, why: str) -> str:
    return (f"error: the model-call cache {path} is damaged ({why}): run `memeval cache check --cache {path}` "
            "to set the bad entries aside (good entries are kept), then rerun")


def _rows(path: Path) -> dict[str, dict]:
    db = sqlite3.connect(path)
    try:
        return {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM responses")}
    finally:
        db.close()


def test_a_run_on_a_damaged_cache_fails_in_one_line_naming_the_file(tmp_path, scripted, data_dir) -> None:
    cache = tmp_path / "cache.sqlite"
    cache.write_bytes(b"not a database, a few bytes of something else " * 100)
    proc = run_cli([*scripted_overrides(scripted, tmp_path, data_dir), "method=vanilla"])
    assert proc.stderr.strip() == _expected(cache, "file is not a database"), proc.stderr[-2000:]
    assert proc.returncode == 2
    assert not (tmp_path / "runs").exists(), "a run that never started left a run folder"
    assert scripted.count() == 0


def test_cache_stats_on_a_damaged_file_names_it_and_the_fix(tmp_path, capsys) -> None:
    cache = tmp_path / "calls.sqlite"
    _good_cache(cache, 300)
    _damage_pages(cache)
    assert cache_main(["stats", "--cache", str(cache)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == _expected(cache, "database disk image is malformed")


def test_a_row_that_is_not_json_is_a_miss_for_a_run_and_named_by_stats(tmp_path, capsys) -> None:
    cache = tmp_path / "calls.sqlite"
    _good_cache(cache, 3)
    db = sqlite3.connect(cache)
    db.execute("INSERT INTO responses VALUES ('abcdef0123456789', '{\"torn')")
    db.commit()
    db.close()
    opened = ResponseCache(cache)
    assert opened.get("abcdef0123456789") is None  # paid again and replaced, as in the folder backend
    opened.close()
    assert cache_main(["stats", "--cache", str(cache)]) == 2
    assert capsys.readouterr().err.strip() == _expected(cache, "entry abcdef0123456789 is not JSON")


def test_check_moves_unreadable_rows_to_quarantine_and_keeps_every_good_one(tmp_path, capsys) -> None:
    cache = tmp_path / "calls.sqlite"
    entries = _good_cache(cache, 50)
    db = sqlite3.connect(cache)
    db.execute("INSERT INTO responses VALUES ('00aa11bb22cc33dd', '{\"torn')")
    db.execute("INSERT INTO responses VALUES ('00aa11bb22cc33ee', ?)", (b"\xff\xfe not utf-8",))
    db.execute("INSERT INTO responses VALUES ('00aa11bb22cc33ff', '[1, 2]')")  # JSON, but no entry
    db.commit()
    db.close()
    assert cache_main(["check", "--cache", str(cache)]) == 1
    out = capsys.readouterr().out.splitlines()
    quarantine = tmp_path / "calls.sqlite.quarantine.sqlite"
    assert out[0] == (f"cache {cache}: 50 of 53 entries kept; 3 unreadable set aside in {quarantine}; "
                      "a run needing a call no longer cached pays for it again")
    assert json.loads(out[1])["quarantined"] == 3
    assert _rows(cache) == entries
    q = sqlite3.connect(quarantine)
    assert sorted(k for (k,) in q.execute("SELECT CAST(key AS TEXT) FROM quarantined")) == [
        "00aa11bb22cc33dd", "00aa11bb22cc33ee", "00aa11bb22cc33ff"]
    q.close()
    assert cache_main(["check", "--cache", str(cache)]) == 0  # nothing left to set aside
    assert capsys.readouterr().out.startswith(f"cache {cache}: 50 entries, all readable")
    assert cache_main(["stats", "--cache", str(cache)]) == 0


def test_check_recovers_a_damaged_file_row_by_row_and_keeps_it_intact(tmp_path, capsys) -> None:
    cache = tmp_path / "calls.sqlite"
    entries = _good_cache(cache, 300)
    _damage_pages(cache)
    damaged_bytes = cache.read_bytes()
    assert cache_main(["check", "--cache", str(cache)]) == 1
    result = json.loads(capsys.readouterr().out.splitlines()[1])
    aside = Path(result["moved_aside"])
    assert aside.read_bytes() == damaged_bytes  # nothing is deleted
    assert result["integrity"] == "database disk image is malformed"
    recovered = _rows(cache)
    assert 0 < result["lost"] < 300 - 250 and result["good"] == len(recovered) == 300 - result["lost"]
    assert all(entries[k] == v for k, v in recovered.items())  # every recovered entry is the one stored
    db = sqlite3.connect(cache)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()


def test_check_moves_a_file_sqlite_cannot_open_aside_and_starts_an_empty_cache(tmp_path, capsys) -> None:
    cache = tmp_path / "calls.sqlite"
    cache.write_bytes(b"garbage" * 1000)
    assert cache_main(["check", "--cache", str(cache)]) == 1
    result = json.loads(capsys.readouterr().out.splitlines()[1])
    assert Path(result["moved_aside"]).read_bytes() == b"garbage" * 1000
    assert _rows(cache) == {} and result["integrity"] == "file is not a database"


def test_check_of_a_folder_cache_quarantines_unreadable_entries(tmp_path, capsys) -> None:
    root = tmp_path / "calls"
    cache = DirectoryCache(root)
    good = {cache_key({"i": i}): {"text": str(i)} for i in range(5)}
    for key, value in good.items():
        cache.put(key, value)
    torn = root / "ab" / "cd" / ("abcd" + "0" * 60 + ".json")
    torn.parent.mkdir(parents=True)
    torn.write_text('{"text": "cut')
    misplaced = root / "00" / "00" / (next(iter(good)) + ".json")
    misplaced.parent.mkdir(parents=True)
    misplaced.write_text('{"text": "x"}')
    assert cache_main(["check", "--cache", str(root)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"cache {root}: 5 of 7 entries kept; 2 unreadable set aside in {root / 'quarantine'}")
    assert (root / "quarantine" / "ab" / "cd" / torn.name).read_text() == '{"text": "cut'
    assert dict(DirectoryCache(root).items()) == good


@pytest.mark.parametrize("cmd", ["check", "stats"])
def test_a_missing_cache_is_named(tmp_path, capsys, cmd: str) -> None:
    assert cache_main([cmd, "--cache", str(tmp_path / "nope.sqlite")]) == 2
    assert capsys.readouterr().err.strip() == f"error: no cache at {tmp_path / 'nope.sqlite'} (pass --cache PATH)"
