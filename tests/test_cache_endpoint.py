"""Cache keys: one model name served by two endpoints must not share answers unless a revision
pins the weights (then a restarted local server on another port still hits the cache)."""

from __future__ import annotations

import asyncio

from scripted_server import ScriptedServer

from memeval.model_access.cache import ResponseCache
from memeval.model_access.chat import ChatModel
from memeval.model_access.embed import OpenAICompatibleEmbedder

MSG = [{"role": "user", "content": "Say something about a lighthouse keeper named Oro Vance."}]


def _ask(url: str, cache: ResponseCache, revision: str | None = None) -> bool:
    model = ChatModel("same-name", base_url=url, api_key_env=None, model_revision=revision, cache=cache)
    return asyncio.run(model.complete(MSG)).cached


def _embed_cached(url: str, cache: ResponseCache, revision: str | None = None) -> int:
    emb = OpenAICompatibleEmbedder("same-emb", base_url=url, api_key_env=None, model_revision=revision,
                                   cache=cache)
    asyncio.run(emb.embed(["a lighthouse on a cliff"]))
    return emb.ledger.summary()["totals"]["cached"]["calls"]


def test_two_endpoints_under_one_name_do_not_share_cached_answers(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    with ScriptedServer() as a, ScriptedServer() as b:
        assert not _ask(a.base_url, cache)
        assert not _ask(b.base_url, cache), "another server under the same name answered from cache"
        assert _ask(a.base_url + "/", cache), "the same endpoint (trailing slash aside) is a cache hit"
        assert a.count() == 1 and b.count() == 1
        assert _embed_cached(a.base_url, cache) == 0 and _embed_cached(b.base_url, cache) == 0
        assert b.count("/v1/embeddings") == 1


def test_a_pinned_revision_keeps_its_key_across_endpoints(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    with ScriptedServer() as a, ScriptedServer() as b:
        assert not _ask(a.base_url, cache, revision="sha256:abc")
        assert _ask(b.base_url, cache, revision="sha256:abc"), "a restarted pinned server must hit the cache"
        assert b.count() == 0
        _embed_cached(a.base_url, cache, revision="emb==1")
        assert _embed_cached(b.base_url, cache, revision="emb==1") == 1 and b.count() == 0
