"""scripts/llama_log_throughput.py on an invented llama-server log: requests, overlap, rates."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import llama_log_throughput as llt  # noqa: E402

LOG = """\
0.01.000.000 I slot launch_slot_: id  0 | task 0 | processing task, is_child = 0
0.01.500.000 I slot launch_slot_: id  1 | task 1 | processing task, is_child = 0
0.11.000.000 I slot print_timing: id  0 | task 0 | prompt eval time =    2000.00 ms /   200 tokens (   10.00 ms per token,   100.00 tokens per second)
0.11.000.001 I slot print_timing: id  0 | task 0 |        eval time =    8000.00 ms /    80 tokens (  100.00 ms per token,    10.00 tokens per second)
0.11.000.002 I slot      release: id  0 | task 0 | stop processing: n_tokens = 1280, truncated = 0
0.11.500.000 I slot print_timing: id  1 | task 1 | prompt eval time =    5000.00 ms /   250 tokens (   20.00 ms per token,    50.00 tokens per second)
0.11.500.001 I slot print_timing: id  1 | task 1 |        eval time =    5000.00 ms /    20 tokens (  250.00 ms per token,     4.00 tokens per second)
0.11.500.002 I slot      release: id  1 | task 1 | stop processing: n_tokens = 1300, truncated = 0
1.30.000.000 I slot launch_slot_: id  0 | task 2 | processing task, is_child = 0
1.40.000.000 I slot print_timing: id  0 | task 2 | prompt eval time =    9000.00 ms /   900 tokens (   10.00 ms per token,   100.00 tokens per second)
1.40.000.001 I slot print_timing: id  0 | task 2 |        eval time =    1000.00 ms /    30 tokens (   33.33 ms per token,    30.00 tokens per second)
1.40.000.002 I slot      release: id  0 | task 2 | stop processing: n_tokens = 9000, truncated = 0
1.41.000.000 I slot launch_slot_: id  1 | task 3 | processing task, is_child = 0
"""


def test_requests_their_overlap_and_rates(tmp_path: Path) -> None:
    log = tmp_path / "llama-server.log"
    log.write_text(LOG)
    requests = llt.read_log(log)  # task 3 never finished: left out
    assert [(r.start, r.end, r.context) for r in requests] == [(1.0, 11.000002, 1280), (1.5, 11.500002, 1300),
                                                              (90.0, 100.000002, 9000)]
    shares = llt.sharing(requests)
    assert 1.9 < shares[0] < 1.96 and 1.9 < shares[1] < 1.96 and shares[2] == 1.0
    lines = llt.table(requests, shares)
    assert "| alone | 8-16k | 1 | 100.0 | 30.0 | 30 |" in lines
    assert "| shared (2 at once) | 0-2k | 2 | 75.0 | 7.0 | 50 |" in lines


def _stamp(t: float) -> str:
    minutes, rest = divmod(t, 60)
    secs = int(rest)
    ms = int((rest - secs) * 1000)
    us = int(round(((rest - secs) * 1000 - ms) * 1000))
    return f"{int(minutes)}.{secs:02d}.{ms:03d}.{min(us, 999):03d}"


def _alone_log(requests: list[tuple[int, int, int]], coef: tuple[float, float, float, float]) -> str:
    """Requests one after another, each lasting what `coef` says its tokens cost."""
    a, b, c, d = coef
    lines, t = [], 1.0
    for task, (prompt, decoded, context) in enumerate(requests):
        prompt_s = prompt * (a + b * (context - decoded - prompt / 2) / 1e3)
        decode_s = decoded * (c + d * (context - decoded / 2) / 1e3)
        lines.append(f"{_stamp(t)} I slot launch_slot_: id  0 | task {task} | processing task")
        t += prompt_s + decode_s
        lines += [f"{_stamp(t)} I slot print_timing: id  0 | task {task} | prompt eval time =  {prompt_s * 1e3:.2f} ms / {prompt} tokens",
                  f"{_stamp(t)} I slot print_timing: id  0 | task {task} |        eval time =  {decode_s * 1e3:.2f} ms / {decoded} tokens",
                  f"{_stamp(t)} I slot      release: id  0 | task {task} | stop processing: n_tokens = {context}, truncated = 0"]
        t += 2.0  # idle between requests: not busy time
    return "\n".join(lines) + "\n"


def test_busy_shares_split_overlaps_and_add_up_to_the_busy_time(tmp_path: Path) -> None:
    log = tmp_path / "llama-server.log"
    log.write_text(LOG)
    requests = llt.read_log(log)
    shares = llt.busy_shares(requests)
    # 1.0-1.5 task 0 alone, 1.5-11.0 both, 11.0-11.5 task 1 alone, 90-100 task 2 alone
    assert shares[0] == pytest.approx(0.5 + 9.5 / 2, abs=1e-4)
    assert shares[1] == pytest.approx(9.5 / 2 + 0.5, abs=1e-4)
    assert sum(shares) == pytest.approx(10.5 + 10.0, abs=1e-4)


def test_the_fit_recovers_the_rates_a_log_was_made_from(tmp_path: Path) -> None:
    """Logs made from known costs (4 ms a prompt token + 1 ms per 1k of context before it, 50 ms a
    decoded token + 5 ms per 1k): the fit returns those four figures and predicts a held-out log."""
    coef = (0.004, 0.001, 0.05, 0.005)
    first = [(800, 40, 900), (2000, 300, 6000), (500, 600, 12000), (3000, 20, 3100)]
    second = [(1200, 100, 1400), (600, 500, 9000), (4000, 50, 8000), (300, 200, 2500)]
    logs = {}
    for name, reqs in (("a.log", first), ("b.log", second)):
        (tmp_path / name).write_text(_alone_log(reqs, coef))
        logs[name] = llt.read_log(tmp_path / name)
    fitted, lines = llt.fit(logs)
    assert fitted == pytest.approx(list(coef), rel=1e-3)
    assert all(line.endswith("| 1.00 |") for line in lines[2:])
    assert llt.throughput_entry(fitted) == ("{prompt_tps: 250.0, generated_tps: 20.0, "
                                           "prompt_slowdown_per_ktok: 0.250, generated_slowdown_per_ktok: 0.100}")
