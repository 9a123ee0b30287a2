"""Every method that can index on the scripted server, at 200 and 2000 chapters: time and memory.

The 2000-chapter corpus is synthetic, generated from the 200-chapter EpBench book's structure:
chapter k is book chapter k mod 196 with its dated years shifted by the copy number and each
capitalised name mapped to an invented one per copy, so chapter lengths, sentence shapes and the
density of names, places and dates follow the book while every chapter's text (and so every
cache key) is new. Each (method, size) runs in a fresh process with an in-memory cache against
the scripted server in a thread; peak RSS is that whole process.

    python scripts/bench_scale.py                          # 200 and 2000 chapters
    python scripts/bench_scale.py --sizes 20 200 --methods vanilla embedding_rag

Last line: `worst time ratio <big>/<small>: X (method)`, the largest growth of index plus
retrieval time for 10 questions (process CPU seconds, which other load on a shared machine
disturbs less than wall time; Vanilla has no index, so its time is retrieval alone).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

from scripted import scripted_server

ROOT = Path(__file__).resolve().parents[1]



METHODS = ["vanilla", "embedding_rag", "gsw"]  # the baselines need their own environments
INVENTED = ["Orla", "Pim", "Quill", "Rhea", "Soren", "Tilde", "Umber", "Vale", "Wren", "Xan", "Yara", "Zeno",
            "Brisk", "Corrow", "Dunmore", "Elstree", "Fenwick", "Garrow", "Hollis", "Ingle"]


KEEP = {"The", "She", "They", "His", "Her", "When", "After", "Chapter"}


def _rename(word: str, copy: int) -> str:
    """An invented name per (word, copy), stable across processes (crc32, not hash())."""
    if word in KEEP:
        return word
    return INVENTED[(zlib.crc32(word.encode()) + copy) % len(INVENTED)] + word[:2].lower()


def synthetic_corpus(n: int, data_dir: Path) -> object:
    """n chapters shaped like the 200-chapter book's (see the module docstring)."""
    from memeval.datasets.epbench import EpBenchLoader
    from memeval.datasets.types import Corpus, Unit

    book = EpBenchLoader(200, str(data_dir)).load()
    source = next(iter(book.corpora.values())).units
    units = []
    for k in range(n):
        copy, src = divmod(k, len(source))
        text = source[src].text
        if copy:
            text = re.sub(r"\b(19|20)(\d\d)\b", lambda m, c=copy: str(int(m.group(0)) + c), text)
            text = re.sub(r"\b([A-Z][a-z]{2,})\b", lambda m, c=copy: _rename(m.group(1), c), text)
        units.append(Unit(str(k + 1), text, k, title=f"Chapter {k + 1}"))
    return Corpus(f"synthetic{n}", tuple(units)), book.questions[:10]


def one(method: str, n: int, data_dir: Path) -> dict:
    from hydra.utils import instantiate
    from omegaconf import OmegaConf
    ScriptedServer = scripted_server()

    from memeval.datasets.types import ContextCap, Question
    from memeval.methods.base import Services
    from memeval.model_access.cache import ResponseCache
    from memeval.model_access.chat import ChatModel
    from memeval.model_access.embed import OpenAICompatibleEmbedder

    corpus, questions = synthetic_corpus(n, data_dir)
    cfg = OmegaConf.load(ROOT / "conf" / "method" / f"{method}.yaml")
    with ScriptedServer() as server, tempfile.TemporaryDirectory() as tmp:
        cache = ResponseCache(None)
        llm = ChatModel("scripted", base_url=server.base_url, api_key_env=None, cache=cache,
                        max_concurrency=16, context_window=128000)
        emb = OpenAICompatibleEmbedder("hashed", base_url=server.base_url, api_key_env=None, cache=cache,
                                       batch_size=256)
        services = Services(llm=llm, embedder=emb, cap=ContextCap(max_units=17), store_root=Path(tmp))
        m = instantiate(cfg, _partial_=True)(services=services)

        async def go() -> tuple[float, float, float, float]:
            t0, c0 = time.perf_counter(), time.process_time()
            index = await m.build_index(corpus)
            t1, c1 = time.perf_counter(), time.process_time()
            for q in questions:
                await m.retrieve(index, Question(q.id, corpus.id, q.text, q.gold))
            return t1 - t0, c1 - c0, (time.perf_counter() - t1) / len(questions), time.process_time() - c0

        wall, cpu, per_q, total_cpu = asyncio.run(go())
        m.close()
        requests = server.count()
    return {"method": method, "chapters": n, "index_seconds": round(wall, 2), "index_cpu_seconds": round(cpu, 2),
            "total_cpu_seconds": round(total_cpu, 2),
            "retrieve_ms": round(1000 * per_q, 1), "requests": requests,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs=2, default=[200, 2000])
    ap.add_argument("--methods", nargs="+", default=METHODS)
    ap.add_argument("--data-dir", type=Path, default=ROOT / "data")
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # internal: METHOD SIZE in a fresh process
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one[0], int(a.one[1]), a.data_dir)))
        return
    ratios = {}
    for method in a.methods:
        rows = []
        for n in a.sizes:
            out = subprocess.run([sys.executable, __file__, "--one", method, str(n), "--data-dir", str(a.data_dir)],
                                 capture_output=True, text=True, cwd=ROOT)
            if out.returncode != 0:
                sys.exit(f"{method} at {n} chapters failed:\n{out.stderr[-3000:]}")
            r = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(r)
            print(f"{method:<14}{n:>6} chapters: index {r['index_seconds']:.2f} s wall, {r['index_cpu_seconds']:.2f} s "
                  f"CPU ({r['total_cpu_seconds']:.2f} s CPU with retrieval), {r['requests']} requests, retrieve {r['retrieve_ms']:.1f} ms/question, "
                  f"peak RSS {r['peak_rss_mb']:.0f} MB", flush=True)
        ratios[method] = rows[1]["total_cpu_seconds"] / max(rows[0]["total_cpu_seconds"], 1e-3)
    worst = max(ratios, key=ratios.get)
    print("time ratios: " + ", ".join(f"{m} {r:.2f}" for m, r in ratios.items()))
    print(f"worst time ratio {a.sizes[1]}/{a.sizes[0]}: {ratios[worst]:.2f} ({worst})")


if __name__ == "__main__":
    main()
