"""Where does the time of GSW's local index go? Calls/min and tokens/s per GSW call kind.

    python scripts/bench_index_local.py [--model qwen2.5-coder-0.5b] [--chunks 8] [--slots 4]
        [--variants schema,no_schema] [--full [--cache PATH] [RUN.PY OVERRIDES...]]

Against the real llama.cpp server (started here, stopped at the end; run it on an otherwise idle
machine), with no cache in the way, it sends GSW's own prompts for the first chapters of the
20-chapter EpBench book (the same builders the method uses): the coreference rewrite, then per
chunk situate -> Operator -> space-time, `--slots` chunks in flight like the index. Per call kind
it prints calls, prompt tokens (and how many the server reused from its prompt cache), generated
tokens, replies cut by max_tokens, prompt and generation tokens/s from the server's own timings,
and calls/min. Variants: `schema` = the JSON wire (json_schema grammar), `no_schema` = the
same calls with plain JSON mode (`json_object`), to price the grammar, and `lines` = the compact
wire (GSW's default: methods/gsw/wire.py's prompts and GBNF grammar), `lines_free` = the compact
prompts without the grammar (its price).

The projection multiplies the measured seconds per chunk by the book's chunk count (plus one
coreference call per chapter). `--full` instead builds GSW's whole index of the book through
run.py (stages=[index]) and times it; with `--cache PATH` its calls land in that cache (so the
index can be reused), by default in a fresh temporary cache so every call is really made.
The last line: `gsw index minutes (epbench20, local): M` (measured with --full, else projected).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

from memeval.datasets.epbench import EpBenchLoader
from memeval.methods.gsw.operator import StageSettings, make_chunks
from memeval.methods.gsw.prompts import (
    coref_messages,
    operator_messages,
    situate_messages,
    spacetime_messages,
)
from memeval.methods.gsw.schemas import OperatorOutput, SpaceTimeOutput
from memeval.methods.gsw.wire import OPERATOR_FORMAT, SPACETIME_FORMAT
from memeval.model_access.local_models import MODELS
from memeval.model_access.local_server import (
    LlamaServerSpec,
    LocalServerPool,
    running_llama_servers,
)

ROOT = Path(__file__).resolve().parents[1]


def _schema(model: Any, variant: str) -> dict[str, Any]:
    if variant == "schema":
        return {"type": "json_schema", "json_schema": {"name": model.__name__, "schema": model.model_json_schema(),
                                                       "strict": False}}
    return {"type": "json_object"}


class Bench:
    """Sends requests straight to the server and keeps the server's timings per call kind."""

    def __init__(self, base_url: str, model: str, slots: int):
        self.client = httpx.AsyncClient(base_url=base_url.rstrip("/") + "/", timeout=1800)
        self.model = model
        self.sem = asyncio.Semaphore(slots)
        self.rows: dict[str, list[dict[str, Any]]] = defaultdict(list)

    async def call(self, kind: str, messages: list[dict[str, str]], max_tokens: int,
                   response_format: dict[str, Any] | None = None, grammar: str | None = None) -> str:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0.0,
                                "max_tokens": max_tokens}
        if response_format:
            body["response_format"] = response_format
        if grammar:
            body["grammar"] = grammar
        async with self.sem:
            t0 = time.perf_counter()
            r = await self.client.post("chat/completions", json=body)
            wall = time.perf_counter() - t0
        r.raise_for_status()
        data = r.json()
        t = data.get("timings") or {}
        self.rows[kind].append({
            "wall": wall, "prompt": data["usage"]["prompt_tokens"], "gen": data["usage"]["completion_tokens"],
            "cached": t.get("cache_n", 0), "prompt_ms": t.get("prompt_ms", 0.0), "gen_ms": t.get("predicted_ms", 0.0),
            "cut": data["choices"][0].get("finish_reason") == "length"})
        return data["choices"][0]["message"]["content"] or ""


def _entities(reply: str, variant: str = "schema") -> list[tuple[str, str]]:
    if variant == "lines":
        try:
            return [(e.id, e.name) for e in OPERATOR_FORMAT.decode(reply).entities]
        except ValueError:
            return []
    try:
        return [(e["id"], e["name"]) for e in json.loads(reply).get("entities", [])][:24]
    except (ValueError, TypeError, KeyError, AttributeError):
        return []


async def run_variant(bench: Bench, chapters: list[tuple[str, list[str]]], variant: str, s: StageSettings) -> float:
    """GSW's per-chunk pipeline over the sampled chunks; returns wall seconds."""
    async def chunk(chapter: str, text: str) -> None:
        ctx = (await bench.call(f"situate/{variant}", situate_messages(chapter, text), s.situate_max_tokens)).strip()
        lines = variant in {"lines", "lines_free"}
        grammar = variant == "lines"  # lines_free: the same compact prompts, decoded without the GBNF
        wire = "compact" if lines else "json"
        op = await bench.call(f"operator/{variant}", operator_messages(text, ctx, wire), s.operator_max_tokens,
                              None if lines else _schema(OperatorOutput, variant),
                              OPERATOR_FORMAT.grammar if grammar else None)
        ents = _entities(op, "lines" if lines else variant)
        if ents:
            await bench.call(f"spacetime/{variant}", spacetime_messages(text, ents, wire), s.spacetime_max_tokens,
                             None if lines else _schema(SpaceTimeOutput, variant),
                             SPACETIME_FORMAT.grammar if grammar else None)

    t0 = time.perf_counter()
    await asyncio.gather(*(chunk(ch, c) for ch, cs in chapters for c in cs))
    return time.perf_counter() - t0


def report(rows: dict[str, list[dict[str, Any]]]) -> None:
    print(f"{'call kind':24} {'calls':>5} {'prompt':>7} {'reused':>7} {'gen':>6} {'cut':>4} "
          f"{'prompt tok/s':>12} {'gen tok/s':>9} {'s/call':>7}")
    for kind, rs in rows.items():
        pms, gms = sum(r["prompt_ms"] for r in rs), sum(r["gen_ms"] for r in rs)
        new_prompt = sum(r["prompt"] - r["cached"] for r in rs)
        print(f"{kind:24} {len(rs):5d} {statistics.mean(r['prompt'] for r in rs):7.0f} "
              f"{statistics.mean(r['cached'] for r in rs):7.0f} {statistics.mean(r['gen'] for r in rs):6.0f} "
              f"{sum(r['cut'] for r in rs):4d} {new_prompt / max(pms / 1000, 1e-9):12.1f} "
              f"{sum(r['gen'] for r in rs) / max(gms / 1000, 1e-9):9.1f} "
              f"{statistics.mean(r['wall'] for r in rs):7.1f}")


def book_chunks(book_units: list[Any], size: int) -> int:
    return sum(len(make_chunks(u.text, size)) for u in book_units)


def full_index(model: str, cache: str | None, overrides: list[str]) -> float:
    """Wall minutes of GSW's whole index of the book through run.py. Without a cache: a fresh
    cache and index root (every call made). With one: the configured index root, so the index
    and its calls are kept for later runs."""
    tmp = tempfile.mkdtemp(prefix="bench-gsw-")
    llm = "local_small" if model == "qwen2.5-coder-0.5b" else "local"
    roots = [f"cache_path={cache}"] if cache else [
        f"index_root={tmp}/indexes", f"output_root={tmp}/runs", f"cache_path={tmp}/calls.sqlite"]
    cmd = [sys.executable, "run.py", "method=gsw", "dataset=epbench20", f"llm={llm}", f"judge={llm}",
           "stages=[index]", "tracking=none", *roots, *overrides]
    print("full index:", " ".join(cmd), flush=True)
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, env={**os.environ, "MEMEVAL_PROGRESS": "0"})
    minutes = (time.perf_counter() - t0) / 60
    if not cache:
        print_cache_facts(f"{tmp}/calls.sqlite")
    return minutes


def print_cache_facts(path: str) -> None:
    """Chat replies in the fresh cache by finish reason (`repeat_stop` = ended at a repeat by
    model_access.repeat_stop), with their generated tokens."""
    from memeval.model_access.cache_store import open_any

    by: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for _, value in open_any(path).items():
        if "text" in value:
            row = by[str(value.get("finish_reason"))]
            row[0] += 1
            row[1] += int(value.get("completion_tokens", 0))
    for reason, (calls, tokens) in sorted(by.items()):
        print(f"chat replies finished by {reason}: {calls} calls, {tokens} generated tokens")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-0.5b", choices=sorted(MODELS))
    ap.add_argument("--chunks", type=int, default=8, help="chunks sampled (from the first chapters)")
    ap.add_argument("--slots", type=int, default=4, help="server slots = calls in flight")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--variants", default="lines,schema", help="lines (compact wire), lines_free (compact, no grammar), schema, no_schema")
    ap.add_argument("--full", action="store_true", help="time GSW's whole index through run.py instead")
    ap.add_argument("--cache", default=None, help="--full: the cache its calls go to (default: a fresh one)")
    ap.add_argument("overrides", nargs="*", help="--full: extra run.py overrides, e.g. method.max_concurrent_chapters=2")
    args = ap.parse_args()
    if running_llama_servers():
        print("note: another llama-server is running; figures will be lower than on an idle machine")
    units = sorted(EpBenchLoader(20, str(ROOT / "data")).load().corpora.popitem()[1].units, key=lambda u: u.position)
    s = StageSettings()
    n_chunks = book_chunks(units, s.chunk_sentences)
    print(f"book: {len(units)} chapters, {n_chunks} chunks of {s.chunk_sentences} sentences (before coreference)")
    if args.full:
        minutes = full_index(args.model, args.cache, args.overrides)
        print(f"gsw index minutes (epbench20, local): {minutes:.1f}")
        return
    spec = LlamaServerSpec(model=args.model, n_parallel=args.slots, threads=args.threads)
    with LocalServerPool() as pool:
        bench = Bench(pool.start(spec), args.model, args.slots)
        chapters: list[tuple[str, list[str]]] = []
        need = args.chunks
        t0 = time.perf_counter()
        for u in units:
            if need <= 0:
                break
            text = await bench.call("coref", coref_messages(u.text), s.coref_max_tokens)
            text = text if 0.6 * len(u.text) <= len(text) <= 1.6 * len(u.text) else u.text
            cs = make_chunks(text, s.chunk_sentences)[:need]
            need -= len(cs)
            chapters.append((text, cs))
        coref_s = (time.perf_counter() - t0) / len(chapters)
        per_chunk: dict[str, float] = {}
        for variant in args.variants.split(","):
            wall = await run_variant(bench, chapters, variant, s)
            per_chunk[variant] = wall / args.chunks
            print(f"{variant}: {args.chunks} chunks in {wall:.0f} s = {per_chunk[variant]:.1f} s/chunk "
                  f"at {args.slots} slots", flush=True)
        await bench.client.aclose()
    report(bench.rows)
    for variant, spc in per_chunk.items():
        n_calls = sum(len(v) for k, v in bench.rows.items() if k.endswith(variant))
        print(f"{variant}: {n_calls / (spc * args.chunks / 60):.1f} calls/min; book projection "
              f"{(spc * n_chunks + coref_s * len(units)) / 60:.0f} min (+ reconciler, summaries)")
    first = next(iter(per_chunk.values()))
    print(f"gsw index minutes (epbench20, local): {(first * n_chunks + coref_s * len(units)) / 60:.0f} (projected)")


if __name__ == "__main__":
    asyncio.run(main())
