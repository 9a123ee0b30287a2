"""scripts/llama_log_throughput.py on an invented llama-server log: requests, overlap, rates."""

from __future__ import annotations

import sys
from pathlib import Path

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
