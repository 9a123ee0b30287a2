"""Kill and fault soak: nothing lost, nothing paid twice.

Runs a scripted-server experiment (`run.py -m method=...` against tests/scripted_server.py)
once without interruption, then again in a fresh folder with a fresh cache while SIGKILLing it at
random points `--kills` times (resuming each time; the kill soak), and again while the server
injects 429 (Retry-After), 500, timeouts, dropped connections and malformed JSON at
`--fault-rate` (the fault soak; `--combined` does both in one soak). Each soak checks:

- every method's metrics.json, judgments.jsonl and results.md are byte-identical to the
  uninterrupted run's;
- no model call was paid twice: no invocation sent a request whose answer was already in the
  cache when it started (`repaid`, must be 0), and every distinct request got exactly one complete
  answer except those in flight when a kill landed (`lost_in_flight`: paid, then lost with the
  process before they could be stored; reported, bounded by the calls in flight at the kills);
- the killed invocations' calls are in usage.jsonl (a killed run's cost is known).

    python scripts/soak_kill.py              # GSW, then LightRAG: 20 kills, then 20% faults each
    python scripts/soak_kill.py --kills 0    # the fault soak alone
    python scripts/soak_kill.py --methods gsw embedding_rag --kills 5 --subset 2 --combined

The LightRAG baseline needs its environment (`python scripts/setup_baselines.py lightrag`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripted import scripted_server

from memeval.model_access.cache import cache_key
from memeval.model_access.chat import endpoint_identity
from memeval.model_access.repeat_stop import RULES

ROOT = Path(__file__).resolve().parents[1]




ScriptedServer = scripted_server()

COMPARED = ("metrics.json", "judgments.jsonl", "results.md")
# LightRAG orders equally ranked entities and relations in its context by the order its async
# merges happened to finish, so a resumed run (or any run whose calls finish in another order)
# can send the answering model the same context with tied lines swapped: observed with and
# without llm_max_async=1. For it, calls that differ from the reference's are reported, not failed.
TIMING_DEPENDENT = {"lightrag"}
FAST_CLIENT = ["llm.timeout_s=2", "judge.timeout_s=2", "embedder.timeout_s=2", "llm.max_attempts=12",
               "judge.max_attempts=12", "embedder.max_attempts=12", "llm.backoff_base_s=0.02",
               "judge.backoff_base_s=0.02", "embedder.backoff_base_s=0.02"]


def run_args(server: ScriptedServer, out: Path, data_dir: Path, methods: list[str], subset: int,
             dataset: str, overrides: tuple[str, ...] = ()) -> list[str]:
    url = server.base_url
    return [sys.executable, str(ROOT / "run.py"), "-m", f"method={','.join(methods)}",
            f"dataset={dataset}", f"subset.n={subset}",
            "llm=openai_compatible", f"llm.base_url={url}", "llm.model=scripted-llm",
            "judge=openai_compatible", f"judge.base_url={url}", "judge.model=scripted-judge",
            "embedder=openai_compatible", f"embedder.base_url={url}", "embedder.model=hashed-bow",
            "tracking=none", f"data_dir={data_dir}", f"output_root={out / 'runs'}",
            f"cache_path={out / 'cache.sqlite'}", *FAST_CLIENT, *overrides]


def paid_units(req: dict[str, Any]) -> list[tuple[str, set[str]]]:
    """What a request pays for, each with the cache keys its answer is stored under (built as
    model_access builds them: unpinned models, so the endpoint joins the key): a chat request
    is one unit; an embedding request one unit per text (after a resume the batches hold
    different texts, so texts, not batches, are what must not be paid twice)."""
    body = req["body"]
    endpoint = {"endpoint": e} if (e := endpoint_identity(None, req.get("base_url"))) else {}
    if req["path"].endswith("/embeddings"):
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        return [(f"embed|{body['model']}|{x}",
                 {cache_key({"kind": "embed", "model": body["model"], "revision": None,
                             "input_type": t, "text": x, **endpoint}) for t in ("document", "query")})
                for x in texts]
    if body.get("stream"):  # a repeat-stop call: the key holds its rule, not the stream options
        plain = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
        return [("chat|" + json.dumps(plain, sort_keys=True),
                 {cache_key({"kind": "chat", "revision": None, **plain, **endpoint, "stop_repeats": rule})
                  for rule in RULES.values()})]
    return [("chat|" + json.dumps(body, sort_keys=True),
             {cache_key({"kind": "chat", "revision": None, **body, **endpoint})})]


def answered_units(requests: list[dict[str, Any]]) -> Counter:
    return Counter(u for r in requests if r["status"] == 200 and r["delivered"] for u, _ in paid_units(r))


def cached_keys(path: Path) -> set[str]:
    if not path.exists():
        return set()
    db = sqlite3.connect(str(path))
    try:
        return {k for (k,) in db.execute("SELECT key FROM responses")}
    finally:
        db.close()


def outputs(out: Path, methods: list[str], dataset: str) -> dict[str, dict[str, bytes]]:
    found: dict[str, dict[str, bytes]] = {}
    for m in methods:
        dirs = sorted((out / "runs" / dataset).glob(f"{m}-*"))
        if len(dirs) != 1:
            raise AssertionError(f"expected one run folder for {m} under {out}, found {dirs}")
        found[m] = {name: (dirs[0] / name).read_bytes() for name in COMPARED}
    return found


def _reap(proc: subprocess.Popen) -> None:
    """After a kill -9 of run.py, nothing of its process group may live on. (Baseline workers
    run in sessions of their own and stop themselves when their parent is gone.)"""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # a worker outlived its parent: reported below
    raise AssertionError("a process of the killed run outlived it by 15 s")


@dataclass
class Reference:
    """The uninterrupted run: its outputs, its requests and how long its phases took."""

    methods: list[str]
    subset: int
    dataset: str
    data_dir: Path
    requests: list[dict[str, Any]]
    outputs: dict[str, dict[str, bytes]]
    startup: float  # launch to the first model call
    span: float  # first model call to the end
    overrides: tuple[str, ...] = ()  # extra Hydra overrides for every invocation


def run_reference(server: ScriptedServer, workdir: Path, methods: list[str], subset: int, data_dir: Path,
                  dataset: str = "epbench20", say: Callable[[str], None] = print,
                  overrides: tuple[str, ...] = ()) -> Reference:
    """Run the experiment once, uninterrupted and fault-free, with its own cache."""
    server.set_fault_rate(0.0)
    out = workdir / "reference"
    n0, t0 = server.count(), time.monotonic()
    ref = subprocess.run(run_args(server, out, data_dir, methods, subset, dataset, overrides),
                         capture_output=True, text=True, cwd=ROOT, timeout=1800)
    if ref.returncode != 0:
        raise AssertionError(f"the uninterrupted run failed:\n{ref.stderr[-3000:]}")
    with server.lock:
        requests = list(server.requests[n0:])
    first = min(r["t"] for r in requests) if requests else t0
    seconds = time.monotonic() - t0
    say(f"reference: {len(requests)} requests in {seconds:.1f} s")
    return Reference(methods, subset, dataset, data_dir, requests, outputs(out, methods, dataset),
                     first - t0, max(0.5, time.monotonic() - first), tuple(overrides))


def soak(server: ScriptedServer, ref: Reference, kills: int, fault_rate: float, workdir: Path,
         seed: int = 0, say: Callable[[str], None] = print) -> dict[str, Any]:
    """Run the experiment again in a fresh folder with a fresh cache, killed `kills` times and
    with faults at `fault_rate`; returns the report, raises AssertionError on any failure."""
    rng = random.Random(seed)
    methods, dataset = ref.methods, ref.dataset
    report: dict[str, Any] = {"methods": methods, "kills_planned": kills, "fault_rate": fault_rate,
                              "reference_requests": len(ref.requests)}
    ref_units = answered_units(ref.requests)
    soak_dir = workdir / f"soak-k{kills}-f{fault_rate:g}-s{seed}"
    server.timeout_sleep_s = 2.5
    server.retry_after_ms = 50
    server.set_fault_rate(fault_rate, seed=seed)
    start = server.count()
    repaid: list[str] = []
    befores: list[set[str]] = []  # the cache's keys when each invocation started
    twice_in_one: list[str] = []
    killed_ranges: list[tuple[int, int]] = []  # request index ranges of killed invocations
    landed = torn = 0
    args = run_args(server, soak_dir, ref.data_dir, methods, ref.subset, dataset, ref.overrides)
    try:
        k = attempts = 0  # k: invocation number; attempts: kills tried (a run may finish first)
        completed = False  # an invocation ran to its end: later kills hit reruns of a finished run
        while True:
            final = landed >= kills or attempts >= 3 * kills
            before = cached_keys(soak_dir / "cache.sqlite")
            befores.append(before)
            n0 = server.count()
            proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                    cwd=ROOT, start_new_session=True)
            if not final:
                attempts += 1
                done = sum(answered_units(server.requests[start:n0]).values())  # work already paid
                left = max(0.1, 1 - done / max(1, sum(ref_units.values())))
                hit = _kill_at_random(proc, server, n0, ref.startup, ref.span * left, kills - landed, rng,
                                      from_launch=completed)
                _reap(proc)
                landed += hit
                completed = completed or not hit
                if hit:
                    killed_ranges.append((n0, server.count(), k))
                    torn += _tear_tails(soak_dir / "runs" / dataset, rng)
            else:
                _, err = proc.communicate(timeout=1800)
                if proc.returncode != 0:
                    raise AssertionError(f"the final resume failed:\n{err[-3000:]}")
            with server.lock:
                sent = server.requests[n0:]
            for r in sent:  # was this answer already stored when the invocation started?
                if r["fault"] is None:
                    repaid += [u[:120] for u, keys in paid_units(r) if keys & before]
            twice_in_one += [u[:120] for u, n in answered_units(sent).items() if n > max(1, ref_units[u])]
            k += 1
            if final:
                break
    finally:
        server.set_fault_rate(0.0)
    with server.lock:
        soak_requests = server.requests[start:]
    answered = answered_units(soak_requests)
    final_keys = cached_keys(soak_dir / "cache.sqlite")
    unmapped = [u for r in soak_requests if r["status"] == 200 and r["delivered"]
                for u, keys in paid_units(r) if not keys & final_keys]
    # a call the reference made n times may be paid n times; one it never made (LightRAG's
    # diverging contexts), once
    allowed = {u: max(1, ref_units[u]) for u in answered}
    lost = sum(max(0, n - allowed[u]) for u, n in answered.items())
    # a unit paid more often than in the reference: every extra answer must have been lost
    # with an invocation that was killed (never with one that ran to its end)
    extra = {u for u, n in answered.items() if n > allowed[u]}
    in_killed = Counter(u for a, b, _ in killed_ranges for u in answered_units(server.requests[a:b]))
    # requests answered to a killed invocation but never stored: paid, then lost with the process
    lost_requests = sum(1 for a, b, k in killed_ranges for r in server.requests[a:b]
                        if r["status"] == 200 and r["delivered"]
                        and not all(keys & befores[k + 1] for _, keys in paid_units(r)))
    unexplained = [u[:120] for u in extra if answered[u] - allowed[u] > in_killed[u]]
    report.update({
        "kills_landed": landed, "kill_attempts": attempts, "torn_tails_written": torn, "soak_requests": len(soak_requests),
        "faults_injected": dict(Counter(r["fault"] for r in soak_requests if r["fault"])),
        "paid_units": sum(answered.values()), "reference_paid_units": sum(ref_units.values()),
        "repaid": len(repaid), "paid_twice_in_one_invocation": len(twice_in_one),
        "lost_in_flight": lost,
        "missing_answers": sorted(set(ref_units) - set(answered))[:5],
        "diverged_calls": len(set(ref_units) ^ set(answered)),
    })
    got = outputs(soak_dir, methods, dataset)
    report["identical"] = {m: {n: got[m][n] == ref.outputs[m][n] for n in COMPARED} for m in methods}
    report["usage_journal"] = _journal_report(soak_dir, dataset, methods)
    report["answered_requests"] = sum(1 for r in soak_requests if r["status"] == 200 and r["delivered"])
    journaled = sum(j["fresh_calls_all_invocations"] for j in report["usage_journal"].values())
    report["lost_requests"] = lost_requests
    say(json.dumps(report, indent=1))
    problems = []
    if unmapped:
        problems.append(f"{len(unmapped)} answered request(s) map to no cache key: the soak's key "
                        f"mapping is out of date with model_access (first: {unmapped[0][:120]})")
    if twice_in_one:
        problems.append(f"{len(twice_in_one)} call(s) answered twice within one invocation: {twice_in_one[:3]}")
    if repaid:
        problems.append(f"{len(repaid)} call(s) paid again although already cached: {repaid[:3]}")
    diverged = []
    if report["missing_answers"]:
        diverged.append(f"calls of the reference never made in the soak: {report['missing_answers']}")
    if set(answered) - set(ref_units):
        diverged.append(f"{len(set(answered) - set(ref_units))} call(s) the reference never made")
    if diverged and set(methods) <= TIMING_DEPENDENT:
        say(f"WARNING ({', '.join(methods)}: timing-dependent context order): " + "; ".join(diverged))
    else:
        problems += diverged
    # every answered request is journaled, except those lost with a killed process; a call is
    # journaled just before its answer is stored, so a kill between the two leaves a call that
    # was journaled (and paid) but counts as lost here: never fewer than kept, never more than paid
    expected = report["answered_requests"] - lost_requests
    if not expected <= journaled <= report["answered_requests"]:
        problems.append(f"usage.jsonl holds {journaled} fresh calls where {expected} were answered and "
                        "kept: a killed invocation's calls went unrecorded (or were recorded twice)")
    if unexplained:
        problems.append(f"{len(unexplained)} call(s) paid again that no kill explains: {unexplained[:3]}")
    if not all(all(v.values()) for v in report["identical"].values()):
        problems.append(f"outputs differ from the uninterrupted run: {report['identical']}")
    if problems:
        raise AssertionError("; ".join(problems))
    return report


def _kill_at_random(proc: subprocess.Popen, server: ScriptedServer, n0: int, startup: float, span: float,
                    kills: int, rng: random.Random, from_launch: bool = False) -> int:
    """SIGKILL at a random point: mostly a random time after the invocation's first new request
    (spread so that the remaining kills cover the remaining work, `span` seconds of it), sometimes
    a random time after launch (start-up, replay from the cache, scoring, writing files). Returns
    1 if the kill landed."""
    launched = time.monotonic()
    if from_launch or rng.random() < 0.25:
        delay = rng.uniform(0, startup + span)
    else:
        while server.count() == n0 and proc.poll() is None and time.monotonic() - launched < 600:
            time.sleep(0.01)
        delay = rng.uniform(0, span * min(1.0, 3 / max(1, kills)))
    deadline = time.monotonic() + delay
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    if proc.poll() is not None:
        return 0  # it finished first: the next invocation resumes a finished run
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return 1


def _tear_tails(runs: Path, rng: random.Random) -> int:
    """Simulate a power loss mid-write: cut the last line of a per-question file in half (a
    SIGKILL cannot tear a single write(); the resumed run must still detect and drop this)."""
    torn = 0
    for path in sorted(runs.glob("*/*.jsonl")):
        if path.name in {"predictions.jsonl", "judgments.jsonl"} and rng.random() < 0.5:
            data = path.read_bytes()
            lines = data.splitlines(keepends=True)
            if lines:
                path.write_bytes(data[: len(data) - len(lines[-1]) // 2 - 1])
                torn += 1
    return torn


def _journal_report(out: Path, dataset: str, methods: list[str]) -> dict[str, Any]:
    """Killed invocations are in usage.jsonl and usage.json's all_invocations."""
    rep = {}
    for m in methods:
        run = next((out / "runs" / dataset).glob(f"{m}-*"))
        usage = json.loads((run / "usage.json").read_text())
        rep[m] = {"invocations": usage["all_invocations"]["invocations"],
                  "interrupted": len(usage["all_invocations"]["interrupted"]),
                  "fresh_calls_all_invocations": usage["all_invocations"]["totals"]["fresh"]["calls"]}
    return rep


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=20, help="the kill soak's kills (0: skip it)")
    ap.add_argument("--fault-rate", type=float, default=0.2, help="the fault soak's rate (0: skip it)")
    ap.add_argument("--combined", action="store_true", help="one soak with both kills and faults")
    ap.add_argument("--methods", nargs="+", default=["gsw", "lightrag"])
    ap.add_argument("--subset", type=int, default=4, help="questions (stratified subset)")
    ap.add_argument("--dataset", default="epbench20")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-dir", type=Path, default=ROOT / "data")
    ap.add_argument("--workdir", type=Path, default=None, help="default: a temporary folder")
    ap.add_argument("overrides", nargs="*", help="extra Hydra overrides, e.g. method.llm_max_async=1")
    a = ap.parse_args(argv)
    plans = ([(a.kills, a.fault_rate)] if a.combined else
             [p for p in ((a.kills, 0.0), (0, a.fault_rate)) if p != (0, 0.0)])
    with tempfile.TemporaryDirectory(prefix="memeval-soak-") as tmp, ScriptedServer() as server:
        work = a.workdir or Path(tmp)
        try:
            for m in a.methods:  # one experiment per method, each with its own settings
                overrides = tuple(a.overrides)
                print(f"== {m} {' '.join(overrides)}", flush=True)
                ref = run_reference(server, work / m, [m], a.subset, a.data_dir.resolve(), a.dataset,
                                    overrides=overrides)
                for kills, rate in plans:
                    print(f"-- {m}: {kills} kills, fault rate {rate:g}", flush=True)
                    soak(server, ref, kills, rate, work / m, a.seed)
        except AssertionError as exc:
            print(f"SOAK FAILED: {exc}", file=sys.stderr)
            return 1
    print("SOAK PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
