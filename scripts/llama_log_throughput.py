"""Per-request throughput from llama-server logs, by context length and by how many requests shared the server.

The estimate stage prices a local model at one prompt and one decode rate measured on a short
request alone (conf/prices `local_throughput`). Real runs are slower, 1.6 times the estimate on
issue 30's first EpBench runs. This script says where the time goes. Each finished request in the
log has its start (launch_slot_), its prompt and decode timings (print_timing), and its final
context length (release: n_tokens). Requests are grouped by that length and by the time-weighted
number of requests the server was running alongside. The script prints the median rates per
group. With --fit it also fits the estimate's context-dependent model: each request's share of
the server's busy time (its seconds divided by the requests running with it, so the shares add
up to the time the server was busy) as fresh prompt tokens x (a + b x their mean position) plus
decoded tokens x (c + d x their mean position), by non-negative least squares over every log
given. It prints the four figures as conf/prices `local_throughput` takes them, and per log the
busy time the fit predicts against the busy time measured.

    python scripts/llama_log_throughput.py ~/.cache/memeval/logs/llama-server-qwen2.5-coder-1.5b-*.log
    python scripts/llama_log_throughput.py --fit LOG...
"""

from __future__ import annotations

import argparse
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

_TIME = r"^(\d+)\.(\d+)\.(\d+)\.(\d+) "
LAUNCH = re.compile(_TIME + r"I slot launch_slot_: id +\d+ \| task (\d+) ")
PROMPT = re.compile(_TIME + r"I slot print_timing: id +\d+ \| task (\d+) \| prompt eval time = +([\d.]+) ms / +(\d+) tokens")
DECODE = re.compile(_TIME + r"I slot print_timing: id +\d+ \| task (\d+) \| +eval time = +([\d.]+) ms / +(\d+) tokens")
RELEASE = re.compile(_TIME + r"I slot +release: id +\d+ \| task (\d+) \| stop processing: n_tokens = (\d+)")
BUCKETS = (2000, 4000, 8000, 16000, 32000)


@dataclass
class Request:
    start: float | None = None
    end: float | None = None
    prompt_ms: float = 0.0
    prompt_tokens: int = 0
    decode_ms: float = 0.0
    decode_tokens: int = 0
    context: int = 0


def _seconds(m: re.Match[str]) -> float:
    minutes, secs, ms, us = (int(m.group(i)) for i in range(1, 5))
    return minutes * 60 + secs + ms / 1e3 + us / 1e6


def read_log(path: Path) -> list[Request]:
    """The finished requests of one log (task ids restart per log)."""
    tasks: dict[str, Request] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if m := LAUNCH.match(line):
            tasks.setdefault(m.group(5), Request()).start = _seconds(m)
        elif m := PROMPT.match(line):
            r = tasks.setdefault(m.group(5), Request())
            r.prompt_ms, r.prompt_tokens = float(m.group(6)), int(m.group(7))
        elif m := DECODE.match(line):
            r = tasks.setdefault(m.group(5), Request())
            r.decode_ms, r.decode_tokens = float(m.group(6)), int(m.group(7))
        elif m := RELEASE.match(line):
            r = tasks.setdefault(m.group(5), Request())
            r.end, r.context = _seconds(m), int(m.group(6))
    return [r for r in tasks.values() if r.start is not None and r.end is not None and r.end > r.start]


def sharing(requests: list[Request]) -> list[float]:
    """Per request, the time-weighted mean number of requests running during it (itself included)."""
    out = []
    for r in requests:
        assert r.start is not None and r.end is not None
        overlap = sum(max(0.0, min(r.end, o.end) - max(r.start, o.start))  # type: ignore[arg-type,type-var]
                      for o in requests)
        out.append(overlap / (r.end - r.start))
    return out


def busy_shares(requests: list[Request]) -> list[float]:
    """Per request, its share of the server's busy seconds: each instant split evenly between the
    requests running then. The shares add up to the time at least one request ran."""
    events = sorted({t for r in requests for t in (r.start, r.end)})  # type: ignore[misc]
    shares = [0.0] * len(requests)
    for lo, hi in zip(events, events[1:], strict=False):
        running = [i for i, r in enumerate(requests) if r.start <= lo and r.end >= hi]  # type: ignore[operator]
        for i in running:
            shares[i] += (hi - lo) / len(running)
    return shares


def features(r: Request) -> list[float]:
    """Fresh prompt tokens, their mean position (thousands), decoded tokens, theirs."""
    prompt_mid = max(0.0, r.context - r.decode_tokens - r.prompt_tokens / 2) / 1e3
    decode_mid = max(0.0, r.context - r.decode_tokens / 2) / 1e3
    return [r.prompt_tokens, r.prompt_tokens * prompt_mid, r.decode_tokens, r.decode_tokens * decode_mid]


def fit(logs: dict[str, list[Request]]) -> tuple[list[float], list[str]]:
    """The model's four coefficients (prompt and decode seconds per token at no context, and their
    growth per 1k tokens of context) and a per-log check of the busy time they predict, fitted on
    the other logs (leave one out) so the check is not the fit's own data. Fitting prompt and
    decode milliseconds apart does not work: while one request decodes, others process prompts,
    and the server's per-request timings do not say whose time that was."""
    import numpy as np
    from scipy.optimize import nnls

    rows = {name: np.array([features(r) for r in requests]) for name, requests in logs.items()}
    busy = {name: np.array(busy_shares(requests)) for name, requests in logs.items()}

    def solve(names: list[str]) -> np.ndarray:
        return nnls(np.vstack([rows[n] for n in names]), np.concatenate([busy[n] for n in names]))[0]

    coef = solve(list(logs))
    lines = ["| log | requests | busy s measured | fitted on the other logs / measured |", "|---|---|---|---|"]
    for name in logs:
        others = [n for n in logs if n != name]
        held_out = f"{float((rows[name] @ solve(others)).sum()) / busy[name].sum():.2f}" if others else "-"
        lines.append(f"| {name} | {len(logs[name])} | {busy[name].sum():.0f} | {held_out} |")
    return [float(c) for c in coef], lines


def throughput_entry(coef: list[float]) -> str:
    """The fit as a conf/prices `local_throughput.models` entry."""
    a, b, c, d = coef
    prompt_tps, generated_tps = (1 / a if a else float("inf")), (1 / c if c else float("inf"))
    return (f"{{prompt_tps: {prompt_tps:.1f}, generated_tps: {generated_tps:.1f}, "
            f"prompt_slowdown_per_ktok: {(b / a if a else 0):.3f}, generated_slowdown_per_ktok: {(d / c if c else 0):.3f}}}")


def _bucket(context: int) -> str:
    lo = 0
    for hi in BUCKETS:
        if context < hi:
            return f"{lo // 1000}-{hi // 1000}k"
        lo = hi
    return f"{BUCKETS[-1] // 1000}k+"


def table(requests: list[Request], shares: list[float]) -> list[str]:
    groups: dict[tuple[str, str], list[Request]] = {}
    for r, s in zip(requests, shares, strict=True):
        alone = "alone" if s < 1.5 else f"shared ({round(s)} at once)" if s < 6 else "shared (6+)"
        groups.setdefault((alone, _bucket(r.context)), []).append(r)
    lines = ["| requests running | final context | n | prompt tokens/s (median) | decode tokens/s (median) "
             "| decoded tokens (median) |", "|---|---|---|---|---|---|"]
    for (alone, bucket), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], int(kv[0][1].split("-")[0].rstrip("k+")))):
        p = [r.prompt_tokens / r.prompt_ms * 1e3 for r in rs if r.prompt_ms > 0 and r.prompt_tokens >= 32]
        d = [r.decode_tokens / r.decode_ms * 1e3 for r in rs if r.decode_ms > 0 and r.decode_tokens >= 8]
        med = lambda xs: f"{statistics.median(xs):.1f}" if xs else "-"  # noqa: E731
        lines.append(f"| {alone} | {bucket} | {len(rs)} | {med(p)} | {med(d)} | "
                     f"{statistics.median(r.decode_tokens for r in rs):.0f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+", type=Path)
    ap.add_argument("--fit", action="store_true", help="fit the estimate's context-dependent rates")
    args = ap.parse_args(argv)
    logs = {}
    for path in args.logs:
        requests = read_log(path)
        if not args.fit:
            print(f"\n{path.name}: {len(requests)} finished requests")
            if requests:
                print("\n".join(table(requests, sharing(requests))))
        elif requests:
            logs[path.name] = requests
    if args.fit:
        if not logs:
            raise SystemExit("--fit: no finished request in the logs given")
        coef, lines = fit(logs)
        print("\n".join(lines))
        print(f"\nlocal_throughput entry: {throughput_entry(coef)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
