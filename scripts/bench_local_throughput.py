"""Measure what the harness client costs on top of raw HTTP against the local llama.cpp server.

    python scripts/bench_local_throughput.py [--model qwen2.5-coder-0.5b] [--concurrency 4]

Sends the same short answer prompts (a) raw with httpx and (b) through ChatModel with an
in-memory cache, at the same concurrency, alternating raw/harness rounds after a warm-up. Every
prompt begins with a round-specific request id, so neither the server's prompt cache nor the
harness cache can serve a round from an earlier one. The last line is the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

import httpx

from memeval.model_access.cache import ResponseCache
from memeval.model_access.chat import ChatModel
from memeval.model_access.local_models import MODELS
from memeval.model_access.local_server import (
    LlamaServerSpec,
    LocalServerPool,
    running_llama_servers,
)

EPISODES = [
    ("Maya Ortiz", "Lisbon", "March 3, 2024", "a jazz concert", "lost her violin case"),
    ("Tom Becker", "Oslo", "July 14, 2023", "a chess tournament", "met his old teacher"),
    ("Aiko Tanaka", "Kyoto", "May 9, 2025", "a tea ceremony", "broke a ceramic bowl"),
    ("Luis Romero", "Quito", "January 21, 2024", "a science fair", "won second prize"),
    ("Nadia Petrova", "Sofia", "October 2, 2022", "a book signing", "argued with a critic"),
    ("Omar Haddad", "Amman", "June 30, 2025", "a cooking class", "burned the bread"),
    ("Grace Kim", "Busan", "August 8, 2023", "a harbour festival", "found a stray dog"),
    ("Pierre Laurent", "Lyon", "April 17, 2024", "a cycling race", "fixed a flat tyre"),
    ("Sara Lind", "Uppsala", "December 12, 2022", "a choir rehearsal", "sang a solo"),
    ("Ravi Menon", "Kochi", "February 5, 2025", "a boat race", "rescued a rower"),
    ("Elena Rossi", "Turin", "September 19, 2023", "a film premiere", "spilled coffee on a star"),
    ("Jonas Weber", "Graz", "November 23, 2024", "a marathon", "ran with a broken shoe"),
    ("Fatima Diallo", "Dakar", "March 28, 2023", "a fashion show", "designed the final dress"),
    ("Ben Carter", "Leeds", "July 1, 2022", "a pub quiz", "answered every history question"),
    ("Lena Novak", "Brno", "May 25, 2024", "a robotics workshop", "built a walking robot"),
    ("Diego Silva", "Recife", "October 30, 2025", "a football final", "scored the winning goal"),
]


def prompts(tag: str) -> list[list[dict[str, str]]]:
    """One short EpBench-like answer prompt per episode; `tag` makes each round's prompts unique."""
    out = []
    for i, (who, where, when, event, what) in enumerate(EPISODES):
        story = (f"On {when}, {who} attended {event} in {where}. During the evening {who} {what}. "
                 f"Afterwards {who} walked home through the old town of {where}.")
        out.append([{"role": "user", "content": (
            f"Request {tag}-{i:02d}.\nEvent log:\n{story}\n\nQuestion: Describe in detail what "
            f"happened to {who} at {event}, where and when it took place, and how the evening "
            "ended. Write at least 100 words.")}])
    return out


Result = tuple[int, int, float, float]  # prompt tokens, completion tokens, wall s, client CPU s


async def run_raw(base_url: str, model: str, batch: list, concurrency: int, max_tokens: int) -> Result:
    sem = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=base_url, timeout=600) as client:

        async def one(messages: list[dict[str, str]]) -> tuple[int, int]:
            async with sem:
                r = await client.post("/chat/completions", json={
                    "model": model, "messages": messages, "temperature": 0.0, "max_tokens": max_tokens})
                r.raise_for_status()
                u = r.json()["usage"]
                return u["prompt_tokens"], u["completion_tokens"]

        t0, c0 = time.perf_counter(), time.process_time()
        res = await asyncio.gather(*(one(m) for m in batch))
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    return sum(p for p, _ in res), sum(c for _, c in res), dt, cpu


async def run_harness(base_url: str, model: str, batch: list, concurrency: int, max_tokens: int) -> Result:
    chat = ChatModel(model=model, base_url=base_url, api_key_env=None, max_concurrency=concurrency,
                     max_tokens=max_tokens, cache=ResponseCache(None))
    t0, c0 = time.perf_counter(), time.process_time()
    res = await asyncio.gather(*(chat.complete(m) for m in batch))
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert not any(r.cached for r in res)
    return sum(r.prompt_tokens for r in res), sum(r.completion_tokens for r in res), dt, cpu


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="qwen2.5-coder-0.5b", choices=sorted(MODELS))
    p.add_argument("--concurrency", type=int, default=4, help="server slots and client concurrency")
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--rounds", type=int, default=2, help="raw/harness pairs, alternating")
    p.add_argument("--threads", type=int, default=None)
    args = p.parse_args(argv)

    spec = LlamaServerSpec(model=args.model, n_parallel=args.concurrency, threads=args.threads)
    results: dict[str, list[Result]] = {"raw": [], "harness": []}
    with LocalServerPool() as pool:
        t0 = time.perf_counter()
        base_url = pool.start(spec)
        pids = [s["pid"] for s in pool.servers()]
        print(f"server {args.model} ready in {time.perf_counter() - t0:.1f} s at {base_url} "
              f"(slots {spec.n_parallel}, ctx {spec.total_ctx}); log {pool.servers()[0]['log']}")
        warm = asyncio.run(run_raw(base_url, args.model, prompts("warmup")[:args.concurrency],
                                   args.concurrency, args.max_tokens))
        print(f"warm-up: {warm[2]:.1f} s", flush=True)
        for r in range(args.rounds):
            for mode, fn in (("raw", run_raw), ("harness", run_harness)):
                pt, ct, dt, cpu = asyncio.run(fn(base_url, args.model, prompts(f"{mode}{r}"),
                                                 args.concurrency, args.max_tokens))
                results[mode].append((pt, ct, dt, cpu))
                print(f"round {r} {mode:8s}: {len(EPISODES)} requests in {dt:6.2f} s; prompt "
                      f"{pt / dt:7.1f} tok/s ({pt} tok), generated {ct / dt:6.1f} tok/s ({ct} tok); "
                      f"client CPU {1000 * cpu / len(EPISODES):.1f} ms/request", flush=True)
    left = running_llama_servers(pids)
    print(f"servers left running: {left or 'none'}")

    def rate(mode: str) -> float:
        return statistics.fmean((pt + ct) / dt for pt, ct, dt, _ in results[mode])

    for mode in ("raw", "harness"):
        gen = statistics.fmean(ct / dt for _, ct, dt, _ in results[mode])
        pr = statistics.fmean(pt / dt for pt, _, dt, _ in results[mode])
        cpu = statistics.fmean(1000 * c / len(EPISODES) for *_, c in results[mode])
        print(f"{mode:8s} mean: prompt {pr:7.1f} tok/s, generated {gen:6.1f} tok/s, "
              f"total {rate(mode):7.1f} tok/s, client CPU {cpu:.1f} ms/request")
    print(f"harness/raw throughput ratio: {rate('harness') / rate('raw'):.3f}")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
