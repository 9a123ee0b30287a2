"""The one call gate: chat, embedding and Batch API calls are paid (or refused) by the same code."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from memeval.harness.replay import CallNotCached, Replay
from memeval.model_access.batch import BatchQueue
from memeval.model_access.budget import Budget, BudgetExceeded
from memeval.model_access.cache import ResponseCache
from memeval.model_access.chat import ChatModel
from memeval.model_access.embed import OpenAICompatibleEmbedder
from memeval.model_access.gate import CallGate, CallSettings
from memeval.model_access.usage import UsageLedger, stage

MSG = [{"role": "user", "content": "Material: Ada Lovelace wrote the first program.\n\nQuestion: who?"}]
KINDS = ("chat", "embedding", "batch")


def _call(kind: str, server: Any, tmp: Path, settings: CallSettings,
          ledger: UsageLedger | None = None) -> Callable[[], Awaitable[Any]]:
    """One uncached call of `kind` against the scripted server, as a run's clients make it."""
    cache = ResponseCache(tmp / f"{kind}.sqlite")
    common = {"base_url": server.base_url, "api_key_env": None, "cache": cache, "ledger": ledger,
              "settings": settings}
    if kind == "embedding":
        emb = OpenAICompatibleEmbedder("hashed-bow", backoff_base_s=0.01, **common)
        return lambda: emb.embed(["a chapter about Ada", "a chapter about Babbage"])
    llm = ChatModel("scripted-judge", backoff_base_s=0.01, **common)

    async def judged() -> Any:
        with stage("judge"):  # the stage the batch queue covers
            return await llm.complete(MSG)
    return judged


def _settings(kind: str, tmp: Path, **kw: Any) -> CallSettings:
    batch = BatchQueue(tmp / "batches", ["judge"], poll_s=0.05, settle_s=0.05) if kind == "batch" else None
    return CallSettings(batch=batch, **kw)


def _sent(server: Any) -> list[str]:
    return [r["path"] for r in server.requests]


@pytest.mark.parametrize("kind", KINDS)
def test_a_budget_refusal_is_the_same_for_every_kind_of_call(scripted, tmp_path, kind) -> None:
    budget = Budget(0.5, lambda model, prompt, completion: 1.0)  # every call would cost $1
    call = _call(kind, scripted, tmp_path, _settings(kind, tmp_path, budget=budget))
    with pytest.raises(BudgetExceeded, match=r"budget.usd=0.5 reached: \$0.0000 paid this invocation, "
                                             r"and the next .* call \(up to \$1.0000\) would exceed it"):
        asyncio.run(call())
    assert _sent(scripted) == [] and budget.spent_usd == 0 and budget.in_flight == 0


@pytest.mark.parametrize("kind", KINDS)
def test_a_replay_refuses_every_kind_of_uncached_call_before_sending(scripted, tmp_path, kind) -> None:
    replay = Replay()
    budget = Budget(0.0, lambda *a: 1.0)  # never reached: the replay refuses first
    call = _call(kind, scripted, tmp_path, _settings(kind, tmp_path, dry=replay, budget=budget))
    with pytest.raises(CallNotCached, match="not in the cache"):
        asyncio.run(call())
    assert _sent(scripted) == [] and len(replay.refused) == 1
    assert replay.refused[0].startswith("embedding" if kind == "embedding" else "chat")


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_of_paid_call_passes_the_gate_once_and_is_accounted(scripted, tmp_path, kind,
                                                                        monkeypatch) -> None:
    passed: list[str] = []
    pay = CallGate.pay

    async def spy(self: CallGate, who: str, *args: Any, **kw: Any) -> Any:
        passed.append(who)
        return await pay(self, who, *args, **kw)

    monkeypatch.setattr(CallGate, "pay", spy)
    budget = Budget(100.0, lambda model, prompt, completion: (prompt + completion) / 1e6)
    ledger = UsageLedger()
    call = _call(kind, scripted, tmp_path, _settings(kind, tmp_path, budget=budget), ledger)
    asyncio.run(call())
    asyncio.run(call())  # the second time from the cache: no gate
    assert passed == ["hashed-bow" if kind == "embedding" else "scripted-judge"]
    assert budget.spent_usd > 0 and budget.in_flight == 0
    fresh = [k for k in ledger.summary()["stages"].values() if "fresh" in k]
    assert len(fresh) == 1 and fresh[0]["fresh"]["calls"] == 1 and fresh[0]["cached"]["calls"] == 1
    if kind == "batch":
        assert "/v1/batches" in _sent(scripted) and "/v1/chat/completions" not in _sent(scripted)
    else:
        assert len(_sent(scripted)) == 1


def test_a_dry_run_is_answered_before_the_budget_and_never_cached(scripted, tmp_path) -> None:
    from memeval.model_access.dry import DryRecorder

    recorder = DryRecorder(output_ratio={})
    settings = CallSettings(budget=Budget(0.0, lambda *a: 1.0), dry=recorder)
    for kind in ("chat", "embedding"):
        asyncio.run(_call(kind, scripted, tmp_path, settings)())
    assert _sent(scripted) == [] and len(recorder.records) == 2
    assert len(ResponseCache(tmp_path / "chat.sqlite")) == 0 == len(ResponseCache(tmp_path / "embedding.sqlite"))


def test_serve_at_points_the_next_call_at_the_started_server(scripted, tmp_path) -> None:
    llm = ChatModel("scripted", base_url="http://127.0.0.1:9/v1", api_key_env=None, max_attempts=1,
                    cache=ResponseCache(tmp_path / "c.sqlite"))

    async def go() -> None:
        with pytest.raises(Exception, match="failed after 1 attempt"):
            await llm.complete(MSG)  # nothing listens on port 9: the client is connected there
        llm.serve_at(scripted.base_url)
        assert not (await llm.complete(MSG)).cached

    asyncio.run(go())
    assert len(_sent(scripted)) == 1
