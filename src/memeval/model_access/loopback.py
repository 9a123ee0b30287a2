"""A loopback HTTP service whose requests run coroutines on one private event loop.

Used by the embeddings endpoint and the baselines' model proxy: requests arrive on server
threads, but the framework's async clients (and their caches) must see a single event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Coroutine
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

T = TypeVar("T")


class JsonHandler(BaseHTTPRequestHandler):
    """Request handler base: HTTP/1.1, no access log, JSON replies."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server API
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class LoopbackService:
    """Start/stop plumbing; subclasses provide `handler_class()` and call `run(coro)`."""

    name = "loopback"
    server_class: type[ThreadingHTTPServer] = ThreadingHTTPServer

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.host, self.port = host, port
        self._httpd: ThreadingHTTPServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._threads: list[threading.Thread] = []

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return f"http://{self.host}:{self._httpd.server_address[1]}/v1"

    def start(self) -> str:
        if self._httpd is not None:
            return self.base_url
        self._loop = asyncio.new_event_loop()
        loop_thread = threading.Thread(target=self._loop.run_forever, name=f"{self.name}-loop", daemon=True)
        loop_thread.start()
        self._httpd = self.server_class((self.host, self.port), self.handler_class())
        self._httpd.daemon_threads = True
        http_thread = threading.Thread(target=self._httpd.serve_forever, name=f"{self.name}-http", daemon=True)
        http_thread.start()
        self._threads = [loop_thread, http_thread]
        return self.base_url

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run a coroutine on the service's loop from a request thread."""
        assert self._loop is not None, "service not started"
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def components(self) -> list[Any]:
        """The framework components (ChatModel, Embedder) whose calls run on this service's loop."""
        return []

    def close(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._loop is not None:
            if self._loop.is_running():  # their HTTP clients close on the loop that opened them
                with contextlib.suppress(Exception):
                    asyncio.run_coroutine_threadsafe(self._aclose_clients(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            for t in self._threads:
                t.join(timeout=5)
            self._loop.close()
            self._loop = None

    async def _aclose_clients(self) -> None:
        for component in self.components():
            aclose = getattr(component, "aclose", None)
            if aclose is not None:
                await aclose()

    def __enter__(self) -> LoopbackService:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
