"""Shared cache backends, in-flight deduplication across processes, export/import/stats."""

from __future__ import annotations

import asyncio
import gzip
import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memeval.model_access.cache import ResponseCache
from memeval.model_access.cache_cli import main as cache_main
from memeval.model_access.cache_store import DirectoryCache, open_cache
from memeval.model_access.chat import ChatModel
from memeval.model_access.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]

WORKER = r"""
import asyncio, sys, time
sys.path.insert(0, sys.argv[1])
from memeval.model_access.cache_store import open_cache
from memeval.model_access.chat import ChatModel
url, backend, path, m, start = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), float(sys.argv[6])
model = ChatModel(model="scripted", base_url=url, api_key_env=None, cache=open_cache(path, backend))
while time.time() < start:
    time.sleep(0.005)
async def go():
    msgs = [[{"role": "user", "content": f"slow call number {i}"}] for i in range(m)]
    return await asyncio.gather(*(model.complete(x) for x in msgs))
res = asyncio.run(go())
print(sum(r.cached for r in res))
"""


def _slow(messages, req) -> str:  # noqa: ANN001 - scripted rule signature
    time.sleep(0.4)  # long enough that every process asks while the first call is in flight
    return "paid once"


@pytest.mark.parametrize("backend", ["directory", "sqlite"])
def test_n_processes_by_m_identical_calls_pay_m_calls(scripted, tmp_path, backend) -> None:
    scripted.add_rule(r"slow call number", _slow)
    n, m = 4, 5
    path = tmp_path / ("shared" if backend == "directory" else "c.sqlite")
    env = {**os.environ, "MEMEVAL_LOCK_DIR": str(tmp_path / "locks")}
    start = time.time() + 1.5  # every worker is up (imports done) before the barrier opens
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(ROOT), scripted.base_url, backend,
                               str(path), str(m), str(start)], stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(n)]
    cached = [int(p.communicate(timeout=60)[0].strip()) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert scripted.count("/v1/chat/completions") == m
    assert sum(cached) == n * m - m  # everyone but the payer was served from the cache
    assert not list((tmp_path / "locks").rglob("*.lock"))  # holders remove their lock files


def test_coroutines_in_one_process_share_one_call(scripted, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MEMEVAL_LOCK_DIR", str(tmp_path / "locks"))
    scripted.add_rule(r"slow call number", _slow)
    model = ChatModel(model="scripted", base_url=scripted.base_url, api_key_env=None,
                      cache=DirectoryCache(tmp_path / "d"))
    msg = [{"role": "user", "content": "slow call number 1"}]

    async def go():
        return await asyncio.gather(*(model.complete(msg) for _ in range(6)))

    res = asyncio.run(go())
    assert scripted.count() == 1 and sum(r.cached for r in res) == 5


def test_an_embedding_another_coroutine_paid_while_this_one_waited_counts_as_cached(
        scripted, tmp_path, monkeypatch) -> None:
    """As a chat call does: which of two jobs pays for a shared call is a race, what each did is not
    (a waiter used to count nothing, so a parallel sweep's usage differed from a serial one's)."""
    from memeval.model_access.embed import OpenAICompatibleEmbedder

    monkeypatch.setenv("MEMEVAL_LOCK_DIR", str(tmp_path / "locks"))
    scripted.delay_s = 0.4  # every coroutine misses the cache while the first call is in flight
    emb = OpenAICompatibleEmbedder("hashed-bow", base_url=scripted.base_url, api_key_env=None,
                                   cache=DirectoryCache(tmp_path / "d"))

    async def go():
        return await asyncio.gather(*(emb.embed(["a lighthouse on a cliff"]) for _ in range(4)))

    asyncio.run(go())
    totals = emb.ledger.summary()["totals"]
    assert scripted.count("/v1/embeddings") == 1
    assert (totals["fresh"]["calls"], totals["cached"]["calls"]) == (1, 3)


def test_directory_cache_writes_atomically_and_rejects_bad_keys(tmp_path) -> None:
    cache = DirectoryCache(tmp_path / "d")
    key = "ab" * 32
    cache.put(key, {"text": "x"})
    cache.put(key, {"text": "y"})  # overwrite by rename: never a partial file
    assert cache.get(key) == {"text": "y"} and len(cache) == 1
    assert not list((tmp_path / "d" / "tmp").iterdir())
    with pytest.raises(ValueError, match="hex"):
        cache.get("../../etc/passwd")


def test_open_cache_refuses_mismatched_backend(tmp_path) -> None:
    (tmp_path / "f.sqlite").write_text("")
    with pytest.raises(ConfigError, match="needs a folder"):
        open_cache(tmp_path / "f.sqlite", "directory")
    with pytest.raises(ConfigError, match="cache_backend=directory"):
        open_cache(tmp_path, "sqlite")
    with pytest.raises(ConfigError, match="must be one of"):
        open_cache(tmp_path / "x", "redis")


def test_export_import_stats_round_trip_between_backends(tmp_path, capsys) -> None:
    src = ResponseCache(tmp_path / "a.sqlite")
    src.put("aa" * 32, {"text": "hello", "prompt_tokens": 7, "completion_tokens": 2})
    src.put("bb" * 32, {"v": "AAAA"})
    src.close()
    bundle = tmp_path / "calls.jsonl.gz"
    assert cache_main(["export", str(bundle), "--cache", str(tmp_path / "a.sqlite")]) == 0
    dst = tmp_path / "shared"
    assert cache_main(["import", str(bundle), "--cache", str(dst), "--backend", "directory"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["added"] == 2
    assert cache_main(["import", str(bundle), "--cache", str(dst)]) == 0  # again: nothing new
    assert json.loads(capsys.readouterr().out.strip())["already_cached"] == 2
    assert cache_main(["stats", "--cache", str(dst)]) == 0
    st = json.loads(capsys.readouterr().out)
    assert (st["entries"], st["chat"], st["embedding"], st["prompt_tokens"]) == (2, 1, 1, 7)
    assert DirectoryCache(dst).get("aa" * 32)["text"] == "hello"

    with gzip.open(bundle, "rt") as fh:  # a tampered line is refused
        lines = fh.read().splitlines()
    rec = json.loads(lines[0])
    rec["value"]["text"] = "forged"
    with gzip.open(tmp_path / "bad.jsonl.gz", "wt") as fh:
        fh.write(json.dumps(rec) + "\n")
    assert cache_main(["import", str(tmp_path / "bad.jsonl.gz"), "--cache", str(tmp_path / "z.sqlite")]) == 1
    assert json.loads(capsys.readouterr().out)["rejected"] == 1


def test_pending_export_leaves_out_the_calls_a_bundle_already_ships(tmp_path, capsys) -> None:
    """What an unfinished run paid for survives a fresh machine without re-shipping bundled calls."""
    cache_path = tmp_path / "a.sqlite"
    cache = ResponseCache(cache_path)
    for k in ("aa", "bb", "cc"):
        cache.put(k * 32, {"text": k, "prompt_tokens": 1, "completion_tokens": 1})
    cache.close()
    shipped = tmp_path / "shipped.jsonl.gz"
    keys = tmp_path / "keys.txt"
    keys.write_text("aa" * 32 + "\n" + "bb" * 32 + "\n")
    assert cache_main(["export", str(shipped), "--cache", str(cache_path), "--keys", str(keys)]) == 0
    capsys.readouterr()
    pending = tmp_path / "pending.jsonl.gz"
    assert cache_main(["export", str(pending), "--cache", str(cache_path), "--exclude", str(shipped)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["exported"], report["excluded_keys"]) == (1, 2)
    with gzip.open(pending, "rt") as fh:
        assert [json.loads(line)["key"] for line in fh] == ["cc" * 32]
    # a mistyped exclude file would silently re-ship everything: it is refused instead
    assert cache_main(["export", str(pending), "--cache", str(cache_path),
                       "--exclude", str(tmp_path / "missing.jsonl.gz")]) == 2
    assert "no such call file" in capsys.readouterr().err


def test_cli_runs_as_module(tmp_path) -> None:
    ResponseCache(tmp_path / "a.sqlite").put("cc" * 32, {"text": "t", "prompt_tokens": 1, "completion_tokens": 1})
    out = subprocess.run([sys.executable, "-m", "memeval", "cache", "stats", "--cache",
                          str(tmp_path / "a.sqlite")], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(out.stdout)["entries"] == 1


def _open_and_put(path: str, barrier, results) -> None:
    barrier.wait()
    try:
        from memeval.model_access.cache import ResponseCache
        ResponseCache(path).put(f"k{os.getpid()}", {"v": 1})
        results.put("ok")
    except Exception as exc:  # the failure under test: "database is locked"
        results.put(repr(exc))


def test_parallel_jobs_can_open_one_fresh_sqlite_cache_at_once(tmp_path) -> None:
    """Parallel sweep jobs (joblib, submitit) open the same new cache file at the same moment;
    switching it to WAL used to fail for some of them with "database is locked" (6 of 90 opens
    failed over 15 rounds of 6 before the open was serialised)."""
    ctx = multiprocessing.get_context("fork")
    errors = []
    for round_ in range(8):
        path = str(tmp_path / f"cache{round_}.sqlite")
        barrier, results = ctx.Barrier(6), ctx.Queue()
        procs = [ctx.Process(target=_open_and_put, args=(path, barrier, results)) for _ in range(6)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        errors += [r for r in (results.get(timeout=10) for _ in procs) if r != "ok"]
    assert errors == []
