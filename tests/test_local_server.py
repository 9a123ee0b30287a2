"""Local components: the embeddings endpoint (fast, fake embedder) and, where installed, the real
llama.cpp server and MiniLM embedder (integration)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel, Field

from memeval.model_access.embed import Embedder
from memeval.model_access.errors import ConfigError
from memeval.model_access.local_embedder import EmbeddingEndpoint

ROOT = Path(__file__).resolve().parents[1]
SMALL = "qwen2.5-coder-0.5b"


class FakeEmbedder(Embedder):
    """Deterministic 8-dim vectors from a hash of the text; counts one token per word."""

    def __init__(self) -> None:
        super().__init__("fake-embed", normalize=False)

    @staticmethod
    def vector(text: str) -> np.ndarray:
        digest = hashlib.sha256(text.encode()).digest()
        return np.frombuffer(digest, dtype=np.uint8)[:8].astype(np.float32) / 7.0

    def count_tokens(self, texts: list[str]) -> int:
        return sum(len(t.split()) for t in texts)

    async def _embed_batch(self, texts: list[str], input_type: str) -> tuple[np.ndarray, int]:
        return np.stack([self.vector(t) for t in texts]), self.count_tokens(texts)


def test_embedding_endpoint_serves_openai_client() -> None:
    import openai

    texts = ["the whale surfaced", "a storm in Lisbon", "the whale surfaced"]
    with EmbeddingEndpoint(FakeEmbedder()) as ep:
        client = openai.OpenAI(base_url=ep.base_url, api_key="unused", max_retries=0)
        expected = np.stack([FakeEmbedder.vector(t) for t in texts])
        for fmt in (None, "float", "base64"):  # None: the client asks for base64 and decodes it
            kw = {"encoding_format": fmt} if fmt else {}
            resp = client.embeddings.create(model="fake-embed", input=texts, **kw)
            rows = [d.embedding for d in sorted(resp.data, key=lambda d: d.index)]
            if fmt == "base64":  # asked for explicitly: the client hands back the raw strings
                rows = [np.frombuffer(base64.b64decode(r), dtype="<f4") for r in rows]
            got = np.array(rows)
            np.testing.assert_allclose(got, expected, rtol=1e-6)
            assert resp.usage.prompt_tokens == 10
        single = client.embeddings.create(model="fake-embed", input="a storm in Lisbon")
        np.testing.assert_allclose(single.data[0].embedding, FakeEmbedder.vector("a storm in Lisbon"),
                                   rtol=1e-6)
        with pytest.raises(openai.BadRequestError):
            client.embeddings.create(model="fake-embed", input=[[1, 2, 3]])
    with pytest.raises(RuntimeError):
        _ = ep.base_url  # closed


# -- llama.cpp server --------------------------------------------------------------------------
def _server_or_skip() -> None:
    from memeval.model_access.local_models import gguf_path
    from memeval.model_access.local_server import find_llama_server

    try:
        find_llama_server()
        gguf_path(SMALL)
    except ConfigError as exc:
        pytest.skip(f"local llama.cpp server not available: {exc}")


@pytest.fixture(scope="module")
def small_server():
    _server_or_skip()
    from memeval.model_access.local_server import LlamaServerSpec, LocalServerPool

    spec = LlamaServerSpec(model=SMALL, n_parallel=2, ctx_size=8192, startup_timeout_s=180)
    pool = LocalServerPool()
    base_url = pool.start(spec)
    yield pool, spec, base_url
    pool.close()


class Person(BaseModel):
    name: str
    city: str
    hobbies: list[str] = Field(max_length=3)


@pytest.mark.integration
def test_chat_and_json_schema(small_server) -> None:
    from memeval.model_access.chat import ChatModel

    _, _, base_url = small_server
    chat = ChatModel(model=SMALL, base_url=base_url, api_key_env=None, max_tokens=64)
    res = asyncio.run(chat.complete([{"role": "user", "content": "Say hello in one word."}]))
    assert res.text.strip() and res.prompt_tokens > 0 and res.completion_tokens > 0
    person, res = asyncio.run(chat.complete_json(
        [{"role": "user", "content": "Ana lives in Porto and likes surfing and chess. Extract her "
                                     "as JSON with name, city, hobbies."}], Person, max_tokens=96))
    assert isinstance(person, Person) and person.name and res.completion_tokens > 0
    assert "porto" in person.city.lower()


@pytest.mark.integration
def test_same_spec_reuses_one_process_and_close_kills(small_server) -> None:
    from memeval.model_access.local_server import LlamaServerSpec, running_llama_servers

    pool, spec, base_url = small_server
    again = LlamaServerSpec(model=SMALL, n_parallel=2, ctx_size=8192, startup_timeout_s=5)
    assert pool.start(again) == base_url and len(pool.servers()) == 1
    pids = [s["pid"] for s in pool.servers()]
    assert running_llama_servers(pids) == pids
    pool.close()
    assert running_llama_servers(pids) == []  # others' servers on this machine are not ours


@pytest.mark.integration
def test_startup_failure_shows_log_tail() -> None:
    _server_or_skip()
    from memeval.model_access.local_server import LlamaServerSpec, LocalServerError, LocalServerPool

    with LocalServerPool() as pool, pytest.raises(LocalServerError, match="invalid argument: --no-such-flag"):
        pool.start(LlamaServerSpec(model=SMALL, extra_args=["--no-such-flag"]))


_CHILD = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from memeval.model_access.local_server import LlamaServerSpec, LocalServerPool
    pool = LocalServerPool()
    pool.start(LlamaServerSpec(model={model!r}, n_parallel=1, ctx_size=2048))
    print(pool.servers()[0]["pid"], flush=True)
    time.sleep(600)
""")


@pytest.mark.integration
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_server_dies_with_its_parent(sig: int) -> None:
    """Even a SIGKILLed parent leaves no server behind (PR_SET_PDEATHSIG)."""
    _server_or_skip()
    from memeval.model_access.local_server import running_llama_servers

    child = subprocess.Popen([sys.executable, "-c", _CHILD.format(root=str(ROOT), model=SMALL)],
                             stdout=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline() if child.stdout else ""
        server_pid = int(line.strip())
        assert running_llama_servers([server_pid]) == [server_pid]
        os.kill(child.pid, sig)
        child.wait(timeout=30)
        deadline = time.monotonic() + 15
        while running_llama_servers([server_pid]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert running_llama_servers([server_pid]) == []
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


# -- in-process MiniLM -------------------------------------------------------------------------
@pytest.mark.integration
@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None,
                    reason="sentence-transformers not installed (pip install -e .[local])")
def test_sentence_transformer_embedder() -> None:
    from memeval.model_access.local_embedder import SentenceTransformerEmbedder

    emb = SentenceTransformerEmbedder()
    vecs = asyncio.run(emb.embed(["A cat sits on the mat.", "A kitten rests on a rug.",
                                  "Interest rates rose sharply in March."]))
    assert vecs.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    sims = vecs @ vecs.T
    assert sims[0, 1] > sims[0, 2] + 0.3 and sims[0, 1] > sims[1, 2] + 0.3
    assert emb.count_tokens(["A cat sits on the mat."]) == 9  # [CLS] + 7 pieces + [SEP]
