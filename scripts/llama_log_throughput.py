"""Per-request throughput from llama-server logs, by context length and by how many requests shared the server.

The estimate stage prices a local model at one prompt and one decode rate measured on a short
request alone (conf/prices `local_throughput`). Real runs are slower, 1.6 times the estimate on
issue 30's first EpBench runs. This script says where the time goes. Each finished request in the
log has its start (launch_slot_), its prompt and decode timings (print_timing), and its final
context length (release: n_tokens). Requests are grouped by that length and by the time-weighted
number of requests the server was running alongside. The script prints the median rates per
group, the figures the throughput model would need.

    python scripts/llama_log_throughput.py ~/.cache/memeval/logs/llama-server-qwen2.5-coder-1.5b-*.log
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
    args = ap.parse_args(argv)
    for path in args.logs:
        requests = read_log(path)
        print(f"\n{path.name}: {len(requests)} finished requests")
        if requests:
            print("\n".join(table(requests, sharing(requests))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
