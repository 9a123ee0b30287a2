"""A caching, counting OpenAI-compatible endpoint on loopback for the baseline packages.

The packages call their LLM and embedder themselves. Pointing them here routes every call
through the framework's ChatModel and Embedder, so the shared response cache (a rerun makes zero
new calls), the usage ledger (per stage, per question) and cost accounting stay in one place.
Requests are served by threads but executed on one private event loop, each inside the
contextvars of the framework job that caused it (its stage and its per-question call sink).

Models: a chat call made while the job's stage is "index" goes to the indexing model (the run's
llm_index, e.g. gpt-4o-mini for HippoRAG 2 in the paper experiment), every other chat call
(retrieve: query NER, keyword extraction, recognition filters; answer: the package's own answer
prompt) to the answering model, so a package that knows only one model name still indexes and
answers with the models the run names.

Sampling: the package's temperature, seed, stop and n are forwarded (temperature 0, the
harness default, when it sends none), and what each request asked for is tallied per job
(`take_requested`), so a run records how the package itself wanted to sample. A method may set a
reply ceiling (`reply_ceiling`): no reply is asked for more tokens than that, whatever the package
requests (graphiti-core 0.31.2 asks 16,384 for every edge extraction whatever its client was
configured with, and a looping 0.5B model then writes for most of an hour); the tally keeps
what the package asked.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextvars
import copy
import json
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from memeval.model_access.chat import ChatModel
from memeval.model_access.embed import Embedder
from memeval.model_access.loop_clients import LoopClients
from memeval.model_access.loopback import JsonHandler, LoopbackService
from memeval.model_access.usage import current_stage

FORWARDED = ("temperature", "seed", "stop", "n")  # sampling the package chooses, passed on
RECORDED = (*FORWARDED, "top_p", "max_tokens", "max_completion_tokens", "frequency_penalty",
            "presence_penalty", "response_format")  # what is tallied per job


def _private_copy(component: Any) -> Any:
    """Same gate (cache, ledger, run settings; its concurrency slots are per event loop); its own
    client bound to the proxy's event loop."""
    clone = copy.copy(component)
    if hasattr(clone, "_clients"):
        clone._clients = LoopClients()
    return clone


def _text_of(content: Any) -> str:
    """Message content as one string (OpenAI also allows a list of typed parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (timeout, retry) is not an error worth a traceback."""
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError):
            return
        super().handle_error(request, client_address)


class ModelProxy(LoopbackService):
    """`/v1/chat/completions` and `/v1/embeddings` backed by framework components."""

    name = "proxy"
    server_class = _QuietServer

    def __init__(self, chat: ChatModel, embedder: Embedder, host: str = "127.0.0.1",
                 index_chat: ChatModel | None = None, reply_ceiling: int | None = None,
                 stop_repeats: str | None = None):
        super().__init__(host, 0)
        self.reply_ceiling = reply_ceiling
        self.stop_repeats = stop_repeats  # a repeat_stop rule for the package's single-reply calls
        self.chat = _private_copy(chat)
        # index-time chat calls (None: the answering model's); its own copy on the proxy loop
        self.index_chat = _private_copy(index_chat) if index_chat is not None and index_chat is not chat else None
        self.embedder = _private_copy(embedder)
        self.context: contextvars.Context | None = None  # set by the job that is running
        self.counts = {"chat": 0, "embeddings": 0, "errors": 0}
        self._counts_lock = threading.Lock()
        self._requested: Counter[str] = Counter()  # JSON of what a chat request asked for -> count
        self._inflight: dict[str, concurrent.futures.Future] = {}
        self._inflight_lock = threading.Lock()

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    def components(self) -> list[Any]:
        return [self.chat, *([self.index_chat] if self.index_chat is not None else []), self.embedder]

    def _stage(self) -> str:
        """The stage of the framework job whose package made the request (index, retrieve, answer)."""
        return (self.context or contextvars.copy_context()).run(current_stage)

    def chat_for(self, stage: str) -> ChatModel:
        """The model a chat request goes to: the indexing model at index time, else the answering model."""
        return self.index_chat if stage == "index" and self.index_chat is not None else self.chat

    def bump(self, key: str) -> None:
        with self._counts_lock:
            self.counts[key] += 1

    def take_requested(self) -> list[dict[str, Any]]:
        """What the package's chat requests asked for since the last call, with counts."""
        with self._counts_lock:
            tally, self._requested = self._requested, Counter()
        return [{"requested": json.loads(k), "requests": n} for k, n in sorted(tally.items())]

    def run(self, make: Callable[[], Awaitable[Any]]) -> Any:
        """Run a coroutine on the proxy loop inside the current job's context; block for it."""
        assert self._loop is not None
        ctx = (self.context or contextvars.copy_context()).copy()
        done: concurrent.futures.Future = concurrent.futures.Future()

        def start() -> None:
            task = self._loop.create_task(make(), context=ctx)

            def finish(t: asyncio.Task) -> None:
                if t.cancelled():
                    done.cancel()
                elif t.exception() is not None:
                    done.set_exception(t.exception())
                else:
                    done.set_result(t.result())

            task.add_done_callback(finish)

        self._loop.call_soon_threadsafe(start)
        return done.result()

    def once(self, key: Any, compute: Callable[[], Any]) -> Any:
        """Coalesce identical requests in flight: a package that times out and retries (HippoRAG
        waits 5 minutes, a loaded local server can take longer) joins the first computation
        instead of starting a second one."""
        k = json.dumps(key, sort_keys=True, default=str)
        with self._inflight_lock:
            fut = self._inflight.get(k)
            owner = fut is None
            if owner:
                fut = self._inflight[k] = concurrent.futures.Future()
        if not owner:
            return fut.result()
        try:
            value = compute()
        except BaseException as exc:
            fut.set_exception(exc)
            raise
        else:
            fut.set_result(value)
            return value
        finally:
            with self._inflight_lock:
                self._inflight.pop(k, None)

    # -- the two operations ----------------------------------------------------------------
    def chat_completion(self, req: dict[str, Any]) -> dict[str, Any]:
        messages = [{"role": str(m.get("role", "user")), "content": _text_of(m.get("content"))}
                    for m in req.get("messages") or []]
        max_tokens = req.get("max_completion_tokens") or req.get("max_tokens")
        max_tokens = int(max_tokens) if max_tokens else None
        if self.reply_ceiling is not None:
            max_tokens = min(max_tokens or self.reply_ceiling, self.reply_ceiling)
        fmt = req.get("response_format")
        sampling = {k: req.get(k) for k in FORWARDED if req.get(k) is not None}
        self._tally(req)
        chat = self.chat_for(self._stage())
        rule = self.stop_repeats if "n" not in sampling else None  # a rule cuts a single reply (the client's rule)
        result = self.once(("chat", chat.model, messages, max_tokens, fmt, sampling, rule), lambda: self.run(
            lambda: chat.complete(messages, max_tokens=max_tokens, response_format=fmt, sampling=sampling,
                                  stop_repeats=rule)))
        self.bump("chat")
        texts = result.choices or (result.text,)
        return {
            "id": f"memeval-{int(time.time() * 1000)}", "object": "chat.completion",
            "created": int(time.time()), "model": req.get("model") or chat.model,
            "choices": [{"index": i, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": t}} for i, t in enumerate(texts)],
            "usage": {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
                      "total_tokens": result.prompt_tokens + result.completion_tokens},
        }

    def _tally(self, req: dict[str, Any]) -> None:
        asked = {k: req[k] for k in RECORDED if req.get(k) is not None}
        if isinstance(asked.get("response_format"), dict):
            asked["response_format"] = asked["response_format"].get("type")
        with self._counts_lock:
            self._requested[json.dumps(asked, sort_keys=True, default=str)] += 1

    def embeddings(self, req: dict[str, Any]) -> dict[str, Any]:
        raw = req.get("input")
        texts = [raw] if isinstance(raw, str) else raw
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise ValueError("'input' must be a string or a list of strings (token arrays are not supported)")

        # Index-time calls embed documents; retrieval-time calls embed queries (Voyage cares).
        kind = "query" if self._stage() == "retrieve" else "document"
        vecs = (self.once(("embed", kind, texts), lambda: self.run(lambda: self.embedder.embed(texts, kind)))
                if texts else np.zeros((0, 0), dtype=np.float32))
        self.bump("embeddings")
        counter = getattr(self.embedder, "count_tokens", None)
        tokens = int(counter(texts)) if callable(counter) and texts else sum(len(t.split()) for t in texts)
        b64 = req.get("encoding_format") == "base64"
        data = []
        for i, v in enumerate(np.asarray(vecs, dtype=np.float32)):
            emb: Any = base64.b64encode(v.astype("<f4").tobytes()).decode("ascii") if b64 else v.tolist()
            data.append({"object": "embedding", "index": i, "embedding": emb})
        return {"object": "list", "data": data, "model": req.get("model") or self.embedder.model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def _make_handler(proxy: ModelProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def _send_stream(self, reply: dict[str, Any], include_usage: bool) -> None:
            """A complete answer as one SSE chunk, for clients that asked to stream."""
            base = {k: reply[k] for k in ("id", "created", "model")}
            text = reply["choices"][0]["message"]["content"]
            events = [{**base, "object": "chat.completion.chunk", "choices": [
                          {"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]},
                      {**base, "object": "chat.completion.chunk", "choices": [
                          {"index": 0, "delta": {}, "finish_reason": "stop"}]}]
            if include_usage:
                events.append({**base, "object": "chat.completion.chunk", "choices": [],
                               "usage": reply["usage"]})
            body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [
                    {"id": proxy.chat.model, "object": "model", "owned_by": "memeval"},
                    {"id": proxy.embedder.model, "object": "model", "owned_by": "memeval"}]})
            else:
                self._send(200, {"status": "ok"})

        def do_POST(self) -> None:  # noqa: N802 - http.server API
            path = self.path.split("?")[0].rstrip("/")
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            except ValueError as exc:
                self._send(400, {"error": {"message": f"bad JSON: {exc}", "type": "invalid_request_error"}})
                return
            try:
                if path.endswith("/chat/completions"):
                    reply = proxy.chat_completion(req)
                    if req.get("stream"):
                        opts = req.get("stream_options") or {}
                        self._send_stream(reply, bool(opts.get("include_usage")))
                        return
                elif path.endswith("/embeddings"):
                    reply = proxy.embeddings(req)
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
            except ValueError as exc:
                proxy.bump("errors")
                self._send(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
                return
            except Exception as exc:  # the package sees an API error and applies its own policy
                proxy.bump("errors")
                self._send(502, {"error": {"message": f"{type(exc).__name__}: {exc}", "type": "upstream_error"}})
                return
            self._send(200, reply)

    return Handler
