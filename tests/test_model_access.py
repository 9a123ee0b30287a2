"""The client layer: cache keys, retries on injected faults, JSON repair, usage accounting."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from pydantic import BaseModel

from memeval.model_access.cache import ResponseCache, cache_key
from memeval.model_access.chat import ChatModel
from memeval.model_access.embed import OpenAICompatibleEmbedder
from memeval.model_access.errors import ConfigError, JsonOutputError, ModelCallError
from memeval.model_access.usage import UsageLedger, stage

MSG = [{"role": "user", "content": "Material: Chapter text about Ada Lovelace.\n\nQuestion: who?"}]


def chat(server, tmp_path, **kw) -> ChatModel:
    kw.setdefault("cache", ResponseCache(tmp_path / "c.sqlite"))
    return ChatModel(model="scripted", base_url=server.base_url, api_key_env=None,
                     backoff_base_s=0.01, **kw)


def test_cache_key_covers_every_parameter() -> None:
    base = {"model": "m", "messages": MSG, "temperature": 0.0, "max_tokens": 10}
    assert cache_key(base) == cache_key(dict(reversed(list(base.items()))))
    for change in ({"model": "m2"}, {"max_tokens": 11}, {"temperature": 0.1},
                   {"response_format": {"type": "json_object"}}):
        assert cache_key({**base, **change}) != cache_key(base)


def test_second_call_is_served_from_cache_and_accounted(scripted, tmp_path) -> None:
    ledger = UsageLedger()
    model = chat(scripted, tmp_path, ledger=ledger)

    async def go():
        with stage("answer"):
            a = await model.complete(MSG)
            b = await model.complete(MSG)
        return a, b

    a, b = asyncio.run(go())
    assert a.text == b.text and not a.cached and b.cached
    assert scripted.count() == 1
    s = ledger.summary()["stages"]["answer"]
    assert s["fresh"]["calls"] == 1 and s["cached"]["calls"] == 1
    assert s["fresh"]["prompt_tokens"] == s["cached"]["prompt_tokens"] > 0


def test_cache_persists_across_processes(scripted, tmp_path) -> None:
    asyncio.run(chat(scripted, tmp_path).complete(MSG))
    again = chat(scripted, tmp_path, cache=ResponseCache(tmp_path / "c.sqlite"))
    assert asyncio.run(again.complete(MSG)).cached
    assert scripted.count() == 1


@pytest.mark.parametrize("fault", ["429", "500", "timeout", "drop", "malformed"])
def test_transient_faults_are_retried(scripted, tmp_path, fault) -> None:
    scripted.timeout_sleep_s = 2.0
    scripted.retry_after_ms = 10
    scripted.inject(fault, fault)
    model = chat(scripted, tmp_path, timeout_s=0.5)
    result = asyncio.run(model.complete(MSG))
    assert result.text == "Ada Lovelace" and scripted.count() == 3
    assert [r["fault"] for r in scripted.requests] == [fault, fault, None]


def test_retry_after_of_a_429_is_honoured(scripted, tmp_path) -> None:
    import time

    scripted.retry_after_ms = 1200  # far above the 0.01 s backoff the client would choose itself
    scripted.inject("429")
    t0 = time.monotonic()
    asyncio.run(chat(scripted, tmp_path).complete(MSG))
    assert time.monotonic() - t0 >= 1.1 and scripted.count() == 2


def test_persistent_failure_raises_after_bounded_attempts(scripted, tmp_path) -> None:
    scripted.inject(*["500"] * 10)
    with pytest.raises(ModelCallError, match="after 3 attempt"):
        asyncio.run(chat(scripted, tmp_path, max_attempts=3).complete(MSG))
    assert scripted.count() == 3


class Answer(BaseModel):
    answer: str


def test_malformed_json_is_repaired(scripted, tmp_path) -> None:
    scripted.add_rule(r"Question: who", lambda m, r: "{not json")
    scripted.add_rule(r"only the corrected JSON", lambda m, r: '{"answer": "fixed"}')  # tried first
    parsed, _ = asyncio.run(chat(scripted, tmp_path).complete_json(MSG, Answer))
    assert parsed.answer == "fixed" and scripted.count() == 2


def test_malformed_json_after_repairs_is_a_clear_error(scripted, tmp_path) -> None:
    scripted.add_rule(r"Question: who", lambda m, r: "{not json")
    with pytest.raises(JsonOutputError) as info:
        asyncio.run(chat(scripted, tmp_path, json_repair_attempts=2).complete_json(MSG, Answer))
    assert len(info.value.raw_outputs) == 3 and "Answer" in str(info.value)
    # every attempt was paid for and cached: a rerun replays them without new calls
    with pytest.raises(JsonOutputError):
        asyncio.run(chat(scripted, tmp_path, json_repair_attempts=2).complete_json(MSG, Answer))
    assert scripted.count() == 3


def test_json_schema_is_sent_as_response_format(scripted, tmp_path) -> None:
    scripted.add_rule(r"Question: who", lambda m, r: '{"answer": "Ada"}')
    asyncio.run(chat(scripted, tmp_path).complete_json(MSG, Answer))
    fmt = scripted.requests[-1]["body"]["response_format"]
    assert fmt["type"] == "json_schema" and "answer" in fmt["json_schema"]["schema"]["properties"]
    assert scripted.requests[-1]["body"]["temperature"] == 0.0


def test_missing_api_key_names_the_variable(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        ChatModel(model="gpt-4o").check_ready()
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAICompatibleEmbedder(model="text-embedding-3-small").check_ready()


def test_embeddings_cached_per_text(scripted, tmp_path) -> None:
    emb = OpenAICompatibleEmbedder(model="hashed", base_url=scripted.base_url, api_key_env=None,
                                   cache=ResponseCache(tmp_path / "e.sqlite"), batch_size=2)
    v1 = asyncio.run(emb.embed(["alpha beta", "gamma", "alpha beta gamma"]))
    calls = scripted.count()
    v2 = asyncio.run(emb.embed(["gamma", "alpha beta"]))
    assert scripted.count() == calls == 2  # two batches, then nothing new
    assert np.allclose(v2[0], v1[1]) and np.allclose(np.linalg.norm(v1, axis=1), 1.0)
