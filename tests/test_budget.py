"""The budget guard: a run stops before the call that would exceed budget.usd and resumes for free."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from conftest import run_cli, scripted_overrides

from memeval.model_access.budget import Budget, BudgetExceeded


def _cost(model: str, prompt: int, completion: int) -> float:
    return (prompt + completion) / 100  # $0.01 per token


def test_reservations_never_overshoot_and_stop_waits_for_calls_in_flight() -> None:
    budget = Budget(1.0, _cost)
    order: list[str] = []

    async def paid_call(name: str, delay: float) -> None:
        reserved = await budget.reserve("m", 30, 10)  # worst case $0.40
        await asyncio.sleep(delay)
        order.append(name)
        budget.settle(reserved, "m", 30, 5)  # billed $0.35

    async def go() -> None:
        first = [asyncio.create_task(paid_call(n, 0.2)) for n in ("a", "b")]  # $0.80 reserved
        await asyncio.sleep(0.01)
        with pytest.raises(BudgetExceeded, match="budget.usd=1 reached"):
            await paid_call("c", 0)  # $0.80 + $0.40 > $1: refused ...
        assert order == ["a", "b"]  # ... but only after the calls in flight landed
        await asyncio.gather(*first)
        with pytest.raises(BudgetExceeded):  # tripped: nothing more is paid this invocation
            await budget.reserve("m", 1, 0)

    asyncio.run(go())
    assert budget.spent_usd == pytest.approx(0.70) and budget.reserved_usd == 0


def test_negative_budget_is_a_config_error() -> None:
    with pytest.raises(BudgetExceeded.__mro__[1], match=">= 0"):
        Budget(-1, _cost)


def _usage(tmp: Path) -> dict:
    (run,) = sorted((tmp / "runs" / "epbench20").glob("embedding_rag-*"))
    return json.loads((run / "usage.json").read_text())


def test_budget_stops_a_run_and_the_rerun_pays_nothing_twice(scripted, tmp_path, data_dir) -> None:
    args = ["method=embedding_rag", "dataset=epbench20", "subset.n=8", "concurrency.questions=2",
            "+prices.models.scripted-llm={input:100.0,output:100.0}",  # per 1M scripted 'tokens' (words)
            *scripted_overrides(scripted, tmp_path, data_dir)]
    stopped = run_cli([*args, "budget.usd=1.0"])
    assert stopped.returncode == 2, stopped.stderr[-2000:]
    assert "budget.usd=1 reached" in stopped.stderr and "To resume, rerun" in stopped.stderr
    assert "budget.usd=null" in stopped.stderr
    first = _usage(tmp_path)["stages"]["answer"]["fresh"]
    assert 0 < first["calls"] < 8 and first["cost_usd"] <= 1.0
    paid_before = scripted.count("/v1/chat/completions")

    resumed = run_cli([*args, "budget.usd=100"])
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    second = _usage(tmp_path)["stages"]["answer"]
    assert second["cached"]["calls"] == first["calls"] and second["fresh"]["calls"] == 8 - first["calls"]
    chats = [json.dumps(r["body"], sort_keys=True) for r in scripted.requests
             if r["path"].endswith("/chat/completions")]
    assert len(chats) == len(set(chats)), "a call paid before the stop was paid again"
    assert len(chats) > paid_before
