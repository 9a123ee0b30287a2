"""Chronological Awareness (PROTOCOLS.md): Latest, Order (second judge call, Kendall tau), CA,
in metrics.json and the table, and rescorable from judgments.jsonl without a model call."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest
from conftest import run_cli, scripted_overrides

from memeval.evaluation.epbench.order import judge_order, order_of, order_score
from memeval.evaluation.epbench.protocol import EpBenchProtocol
from memeval.model_access.cache import ResponseCache
from memeval.model_access.chat import ChatModel


def _j(qid: str, bucket: str, gold: list[str], scores: list[float], n_pred: int, get: str = "all",
       mapping: list[int] | None = None) -> dict:
    line = {"question_id": qid, "bucket": bucket, "get": get, "retrieval_type": "Times", "gold": gold,
            "matching_score": scores, "identified_items": [f"i{k}" for k in range(n_pred)]}
    if mapping is not None:
        line["order_mapping"] = mapping
    return line


def test_order_of_drops_misses_and_repeats_and_uses_kendall_tau() -> None:
    r = order_of([1, 0], 2)
    assert r.positions == [1, 0] and r.complete and r.tau == pytest.approx(-1.0)
    r = order_of([0, -1, 1, 1, 7], 2)  # -1, the repeat and an out-of-range index are dropped
    assert r.positions == [0, 1] and r.complete and r.tau == pytest.approx(1.0)
    r = order_of([2, 0, 1], 3)  # one concordant pair, two discordant: (1 - 2) / 3
    assert r.tau == pytest.approx(-1 / 3)
    assert not order_of([0], 2).complete and math.isnan(order_of([0], 2).tau)


def test_order_score_is_share_complete_times_mean_tau_floored() -> None:
    assert order_score([order_of([0, 1, 2], 3), order_of([2, 0, 1], 3), order_of([0], 2)]) == pytest.approx(
        (2 / 3) * ((1 - 1 / 3) / 2))
    assert order_score([order_of([1, 0], 2)]) == 0.0  # negative tau is floored at 0
    assert order_score([order_of([], 2)]) == 0.0


def test_metrics_report_latest_order_and_ca() -> None:
    rows = [
        _j("a", "1", ["X"], [1], 1),
        _j("l1", "2", ["D"], [1], 1, get="latest"),        # F1 1
        _j("l2", "3-5", ["D"], [0], 1, get="latest"),      # F1 0
        _j("l3", "1", ["D"], [0], 1, get="latest"),        # bucket 1: not in Latest
        _j("c1", "3-5", ["A", "B", "C"], [1, 1, 1], 3, get="chronological", mapping=[0, 1, 2]),
        _j("c2", "3-5", ["A", "B", "C"], [1, 1, 1], 3, get="chronological", mapping=[2, 0, 1]),
        _j("c3", "2", ["A", "B"], [1, 0], 1, get="chronological", mapping=[0]),
        _j("c4", "1", ["A"], [1], 1, get="chronological"),  # one gold item: not in Order
    ]
    ca = EpBenchProtocol(resamples=100).metrics(rows, [])["chronological_awareness"]
    order = (2 / 3) * ((1 - 1 / 3) / 2)
    assert ca["latest"] == pytest.approx(0.5) and ca["n_latest"] == 2
    assert ca["order"] == pytest.approx(order) and ca["n_order"] == 3 and ca["n_order_complete"] == 2
    assert ca["ca"] == pytest.approx((0.5 + order) / 2) and ca["ca_std"] > 0
    assert ca["order_judge_missing_ids"] == []
    table = EpBenchProtocol(resamples=10).table(EpBenchProtocol(resamples=10).metrics(rows, []), {})
    assert "chronological awareness" in table and f"{(0.5 + order) / 2:.3f}" in table


def test_lines_judged_before_the_order_judge_say_so() -> None:
    rows = [_j("c1", "2", ["A", "B"], [1, 1], 2, get="chronological")]
    m = EpBenchProtocol(resamples=10).metrics(rows, [])
    assert m["chronological_awareness"]["order_judge_missing_ids"] == ["c1"]
    assert "rerun stages=[judge]" in EpBenchProtocol(resamples=10).table(m, {})


def test_order_judge_reads_the_answer_order(scripted, tmp_path) -> None:
    judge = ChatModel("scripted-judge", base_url=scripted.base_url, api_key_env=None,
                      cache=ResponseCache(tmp_path / "c.sqlite"))
    out = asyncio.run(judge_order(judge, "When was Oro seen, in order?", ["May 01, 2030", "June 02, 2030"],
                                  "First on June 02, 2030, then on May 01, 2030.",
                                  ["May 01, 2030", "June 02, 2030"]))
    assert out["order_mapping"] == [1, 0] and order_of(out["order_mapping"], 2).tau == pytest.approx(-1.0)
    assert asyncio.run(judge_order(judge, "q", ["a", "b"], "I cannot find it.", []))["order_mapping"] == []
    assert scripted.count() == 1  # nothing claimed: no call


def test_run_computes_ca_and_rescore_reproduces_it_without_calls(scripted, tmp_path, data_dir) -> None:
    import pandas as pd

    from memeval.datasets.epbench import BOOK20

    qa = pd.read_parquet(data_dir / BOOK20 / "df_qa.parquet")
    chrono = qa[(qa["get"] == "chronological") & (qa["correct_answer"].apply(len) >= 2)].head(3)
    latest = qa[(qa["get"] == "latest") & (qa["n_chapters_correct_answer"] >= 2)].head(2)
    ids = [f"q{int(r.q_idx)}-{int(r.debug_level_2)}" for r in pd.concat([chrono, latest]).itertuples()]
    args = ["method=embedding_rag", "dataset=epbench20", "subset.n=null", f"subset.ids=[{','.join(ids)}]",
            *scripted_overrides(scripted, tmp_path, data_dir)]
    first = run_cli(args)
    assert first.returncode == 0, first.stderr[-3000:]
    (run,) = sorted((tmp_path / "runs" / "epbench20").glob("embedding_rag-*"))
    judgments = [json.loads(x) for x in (run / "judgments.jsonl").read_text().splitlines()]
    chrono_lines = [j for j in judgments if j["get"] == "chronological"]
    assert len(chrono_lines) == 3 and all("order_mapping" in j for j in chrono_lines)
    metrics = json.loads((run / "metrics.json").read_text())
    ca = metrics["chronological_awareness"]
    assert ca is not None and ca["n_order"] == 3 and ca["n_latest"] == 2 and ca["latest"] is not None
    assert "chronological awareness" in (run / "results.md").read_text()
    assert "context cap: 3 units (data maximum)" in (run / "results.md").read_text()
    assert json.loads((run / "meta.json").read_text())["subset"].startswith("5 of ") and "chosen by id" in (
        run / "results.md").read_text(), "a subset chosen by id is not labelled stratified"

    calls = scripted.count()
    (run / "metrics.json").unlink()
    out = run_cli_rescore(run)
    assert "chronological awareness = " in out and scripted.count() == calls
    assert json.loads((run / "metrics.json").read_text())["chronological_awareness"] == ca


def run_cli_rescore(run: Path) -> str:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-m", "memeval", "rescore", str(run)], capture_output=True, text=True,
                       cwd=root, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout
