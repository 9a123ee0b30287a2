"""How GSW indexing scales with corpus size: synthetic 200- and 2000-chapter books indexed through
the scripted test server (in-process thread, in-memory cache), each size in a fresh process.

    python scripts/bench_gsw_scale.py                  # 200 and 2000 chapters
    python scripts/bench_gsw_scale.py --sizes 50 500   # other sizes (the ratio line uses the last two)

Prints per size: index wall and CPU seconds, requests, time per chapter, peak RSS (the whole
process: client, server thread and index), retrieval time for a few questions, and the CPU
seconds of the whole size process (getrusage of the children this script waited for: imports,
server, index and retrieval, plus anything it spawned). Then the <big>/<small> ratio in wall
seconds and in CPU seconds; the last line is `time ratio <big>/<small> chapters: X` in index
CPU seconds, which other jobs on a shared machine disturb far less than wall-clock time;
linear growth means X close to big/small.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scripted import scripted_server

ROOT = Path(__file__).resolve().parents[1]



FIRST = ["Ava", "Ben", "Cara", "Dev", "Ezra", "Fay", "Gus", "Hana", "Ivo", "Jade", "Kai", "Lena", "Milo", "Nora"]
LAST = ["Stone", "Cole", "Dale", "Edwards", "Ford", "Grant", "Hale", "Irwin", "Jones", "Keller", "Lopez"]
PLACES = ["Central Park", "Ellis Island", "Woolworth Building", "High Line", "Brooklyn Bridge", "Yankee Stadium",
          "Trinity Church", "Snug Harbor", "Bethpage Black Course", "Queensboro Bridge"]
EVENTS = ["Astronomy Night", "Tech Hackathon", "Film Festival", "Jazz Night", "Parkour Workshop", "Fashion Show"]
MONTHS = ["January", "March", "May", "June", "September", "November"]


def synthetic_chapter(rng: random.Random) -> str:
    """Six sentences: two chunks of three, a place, a date, three people, one recurring."""
    a, b, c = (f"{rng.choice(FIRST)} {rng.choice(LAST)}" for _ in range(3))
    place, event = rng.choice(PLACES), rng.choice(EVENTS)
    date = f"{rng.choice(MONTHS)} {rng.randint(1, 28):02d}, {rng.choice([2024, 2025, 2026])}"
    return (f"At {place}, {a} opened the {event} on {date}. {b} arrived with a heavy bag. "
            f"The crowd grew quiet. {a} thanked everyone for coming. {c} watched from the back. "
            f"{b} left before midnight.")


def _gc_collections() -> int:
    """Collections of all generations so far: one per ~700 net container allocations, a count
    of work that, unlike CPU time, other processes on the machine cannot inflate."""
    return sum(g["collections"] for g in gc.get_stats())


def _children_cpu() -> float:
    """User plus system CPU seconds of the children waited for so far (theirs included): a size
    measured in its own process is counted whole, whatever that process spawned."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def one_size(n: int, seed: int = 0) -> dict:
    ScriptedServer = scripted_server()

    from memeval.datasets.types import ContextCap, Corpus, Question, Unit
    from memeval.methods.base import Services
    from memeval.methods.gsw.method import GSW
    from memeval.model_access.cache import ResponseCache
    from memeval.model_access.chat import ChatModel
    from memeval.model_access.embed import OpenAICompatibleEmbedder

    rng = random.Random(seed)
    corpus = Corpus(f"synthetic{n}", tuple(Unit(str(i + 1), synthetic_chapter(rng), i, title=f"Chapter {i + 1}")
                                            for i in range(n)))
    questions = [Question(f"q{i}", corpus.id, f"List every place where {rng.choice(FIRST)} {rng.choice(LAST)} "
                          f"took part in the {rng.choice(EVENTS)}.", ()) for i in range(20)]
    with ScriptedServer() as server, tempfile.TemporaryDirectory() as tmp:
        cache = ResponseCache(None)
        llm = ChatModel("scripted", base_url=server.base_url, api_key_env=None, cache=cache, max_concurrency=16)
        emb = OpenAICompatibleEmbedder("hashed", base_url=server.base_url, api_key_env=None, cache=cache,
                                       batch_size=256)
        gsw = GSW(Services(llm=llm, embedder=emb, cap=ContextCap(max_units=17), store_root=Path(tmp)),
                  name="gsw", max_concurrent_chapters=16)

        async def go() -> tuple[float, float, float, float, object]:
            g0 = _gc_collections()
            t0, c0, h0 = time.perf_counter(), time.process_time(), time.thread_time()
            index = await gsw.build_index(corpus)
            t1, c1, h1 = time.perf_counter(), time.process_time(), time.thread_time()
            work["gc"] = _gc_collections() - g0
            for q in questions:
                await gsw.retrieve(index, q)
            await llm.aclose()  # on this loop, which made them (model_access/loop_clients.py)
            await emb.aclose()
            return t1 - t0, c1 - c0, h1 - h0, (time.perf_counter() - t1) / len(questions), index

        work: dict[str, int] = {}
        seconds, cpu, thread_cpu, per_question, index = asyncio.run(go())
        requests = server.count()
        # chapter files are written as chapters finish: their times show whether a chapter
        # costs more late in the run (growing state) than early on
        done = sorted(p.stat().st_mtime for p in (Path(tmp) / corpus.id / "chapters").glob("*.json"))
        q = max(1, len(done) // 4)
        early, late = (done[q] - done[0]) / q, (done[-1] - done[-1 - q]) / q
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"chapters": n, "index_seconds": round(seconds, 2), "index_cpu_seconds": round(cpu, 2),
            "client_thread_cpu_seconds": round(thread_cpu, 2), "requests": requests,
            "gc_collections": work["gc"],
            "ms_per_chapter_first_quarter": round(1000 * early, 2), "ms_per_chapter_last_quarter": round(1000 * late, 2),
            "ms_per_chapter": round(1000 * seconds / n, 2), "retrieve_ms": round(1000 * per_question, 2),
            "peak_rss_mb": round(peak_mb, 1), "entities": index.stats.get("entities"),
            "chunks": index.stats.get("chunks"), "operator_failed": index.stats.get("operator_failed", 0)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[200, 2000])
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: measure one size, print JSON
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one_size(a.one)))
        return
    results = []
    for n in a.sizes:
        before = _children_cpu()
        out = subprocess.run([sys.executable, __file__, "--one", str(n)], capture_output=True, text=True, cwd=ROOT)
        if out.returncode != 0:
            sys.exit(f"size {n} failed (exit status {out.returncode}):\n{out.stderr[-3000:]}"
                     f"{out.stdout[-1000:]}")
        r = json.loads(out.stdout.strip().splitlines()[-1])
        r["process_cpu_seconds"] = round(_children_cpu() - before, 2)
        results.append(r)
        print(f"{r['chapters']:>5} chapters: index {r['index_seconds']:.2f} s wall, {r['index_cpu_seconds']:.2f} s CPU "
              f"({r['ms_per_chapter']:.2f} ms/chapter wall, "
              f"{r['requests']} requests, {r['chunks']} chunks, {r['entities']} entities, "
              f"{r['operator_failed']} operator failures), retrieve {r['retrieve_ms']:.1f} ms/question, "
              f"peak RSS {r['peak_rss_mb']:.1f} MB; client-thread CPU {r['client_thread_cpu_seconds']:.2f} s; "
              f"wall ms/chapter in the first quarter {r['ms_per_chapter_first_quarter']:.1f}, "
              f"last quarter {r['ms_per_chapter_last_quarter']:.1f}; "
              f"size process {r['process_cpu_seconds']:.2f} s CPU (with anything it spawned)", flush=True)
    small, big = results[-2], results[-1]
    label = f"{big['chapters']}/{small['chapters']} chapters"
    print(f"wall-clock ratio {label}: {big['index_seconds'] / small['index_seconds']:.2f} "
          f"(sensitive to other load on a shared machine; the ratios below are CPU seconds)")
    print(f"CPU-seconds ratio {label}: index {big['index_cpu_seconds'] / small['index_cpu_seconds']:.2f} "
          f"({small['index_cpu_seconds']:.2f} -> {big['index_cpu_seconds']:.2f} s: client, scripted server "
          f"thread and index), whole size process "
          f"{big['process_cpu_seconds'] / max(small['process_cpu_seconds'], 1e-9):.2f} "
          f"({small['process_cpu_seconds']:.2f} -> {big['process_cpu_seconds']:.2f} s)")
    print(f"allocation-work ratio {label}: {big['gc_collections'] / max(1, small['gc_collections']):.2f} "
          f"(garbage-collector runs, {small['gc_collections']} -> {big['gc_collections']}: insensitive to other load)")
    print(f"time ratio {label}: {big['index_cpu_seconds'] / small['index_cpu_seconds']:.2f}")


if __name__ == "__main__":
    main()
