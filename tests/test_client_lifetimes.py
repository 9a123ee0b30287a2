"""Every async HTTP client is closed on the event loop that made it: a sweep prints no
"Task exception was never retrieved ... Event loop is closed" between jobs (issue 27).

The scripted server keeps connections alive here (HTTP/1.1, as llama.cpp and the providers
do): over HTTP/1.0 each connection closes after its reply and a leaked client has nothing left
to close, so the problem would not show."""

from __future__ import annotations

import asyncio
import gc

from conftest import ROOT, run_cli, scripted_overrides
from scripted_server import ScriptedServer

from memeval.model_access.chat import ChatModel
from memeval.model_access.embed import OpenAICompatibleEmbedder
from memeval.model_access.local_embedder import EmbeddingEndpoint

NOISE = ("Event loop is closed", "Task exception was never retrieved", "unclosed transport")


def test_a_local_sweep_closes_its_clients_between_jobs(tmp_path) -> None:
    with ScriptedServer(keep_alive=True) as server:
        r = run_cli(["-m", "method=vanilla,embedding_rag,seem,gsw", "dataset=custom",
                     f"dataset.path={ROOT / 'examples' / 'saltmarsh'}", "subset.n=null",
                     *scripted_overrides(server, tmp_path, tmp_path)],
                    env={"PYTHONWARNINGS": "always::ResourceWarning"}, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "sweep: 4 of 4 job(s) finished" in r.stderr
    said = r.stdout + r.stderr  # hydra's job logging goes to stdout (and run.log)
    for noise in NOISE:
        assert noise not in said, said[said.find(noise) - 2000:][:4000]


def test_each_loop_gets_its_own_client_and_closes_it(tmp_path) -> None:
    """Two loops in turn (two sweep jobs), nothing left open, nothing reported when collected."""
    errors: list[object] = []

    async def job(model: ChatModel) -> object:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: errors.append(ctx))
        gc.collect()  # the previous loop's garbage, collected while this loop runs
        await model.complete([{"role": "user", "content": f"hello from loop {id(asyncio.get_running_loop())}"}])
        client = model._ensure_client()
        assert model._ensure_client() is client
        await model.aclose()
        await asyncio.sleep(0.05)
        return client

    with ScriptedServer(keep_alive=True) as server:
        model = ChatModel("scripted", base_url=server.base_url, api_key_env=None)
        first, second = asyncio.run(job(model)), asyncio.run(job(model))
    assert first is not second and first.is_closed() and second.is_closed()
    assert model._clients.open_count() == 0 and errors == []


def test_a_loopback_service_closes_its_loops_clients(tmp_path) -> None:
    import openai

    with ScriptedServer(keep_alive=True) as server:
        emb = OpenAICompatibleEmbedder("hashed", base_url=server.base_url, api_key_env=None)
        with EmbeddingEndpoint(emb) as endpoint:
            openai.OpenAI(base_url=endpoint.base_url, api_key="x").embeddings.create(model="hashed", input=["a"])
            assert emb._clients.open_count() == 1  # made on the endpoint's private loop
            (client,) = emb._clients._by_loop.values()
        assert client.is_closed() and emb._clients.open_count() == 0
