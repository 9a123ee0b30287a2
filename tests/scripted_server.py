"""A scripted OpenAI-compatible server on loopback for fast, deterministic end-to-end tests.

Answers chat requests by prompt kind (rules matched on the prompt text), serves hashed
bag-of-words embeddings, records every request (path, body, headers, how it was answered), and
injects faults on demand (`inject`) or at a seeded random rate (`fault_rate`): HTTP 429 with
Retry-After, HTTP 500, a timeout (no reply before the client gives up), a dropped connection, a
malformed JSON body, or (`malformed_content`) a well-formed reply whose content is not JSON.
Never used outside tests.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import re
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

Rule = tuple[str, Callable[[list[dict[str, str]], dict[str, Any]], str]]
DIM = 64
FAULTS = ("429", "500", "timeout", "drop", "malformed")  # what fault_rate draws from


def hashed_embedding(text: str) -> list[float]:
    v = np.zeros(DIM)
    for tok in re.findall(r"[a-z0-9]+", text.lower()):
        h = int(hashlib.md5(tok.encode()).hexdigest(), 16)
        v[h % DIM] += 1.0
    n = np.linalg.norm(v)
    return (v / n if n else v).tolist()


def _epbench_judge(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    """Credit a gold item when the answer contains it verbatim (case-insensitive)."""
    user = messages[-1]["content"]
    m = re.search(r"\n(\[.*?\])\n\nAnswer to grade:\n(.*)\n\nReturn the JSON", user, re.S)
    gold = json.loads(m.group(1)) if m else []
    answer = m.group(2) if m else ""
    found = [g for g in gold if g.lower() in answer.lower()]
    return json.dumps({"identified_items": found or ([] if "cannot" in answer.lower() else [answer[:40]]),
                       "matching_score": [1 if g in found else 0 for g in gold],
                       "explanation": "scripted"})


_DATE = r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December) \d{2}, \d{4}\b"


def _answer(messages: list[dict[str, str]], req: dict[str, Any]) -> str:
    """List the first dates and two-word names of the material, or decline when it has none."""
    body = messages[-1]["content"].split("Question:")[0]
    dates = list(dict.fromkeys(re.findall(_DATE, body)))[:3]
    names = list(dict.fromkeys(re.findall(r"\b([A-Z][a-z]+ [A-Z][a-z]+)\b", body)))[:3]
    items = dates + names
    return ", ".join(items) if items else "I cannot find this in the material."


DEFAULT_RULES: list[Rule] = [
    (r"You grade answers to questions about a long story", _epbench_judge),
    (r"Material:", _answer),
]


def plugin_rules() -> list[Rule]:
    """Rules contributed by tests/scripted_rules/*.py (each module defines RULES)."""
    import importlib
    import pkgutil
    from pathlib import Path

    rules: list[Rule] = []
    folder = Path(__file__).parent / "scripted_rules"
    for mod in sorted(pkgutil.iter_modules([str(folder)]), key=lambda m: m.name):
        spec = importlib.util.spec_from_file_location(f"scripted_rules_{mod.name}", folder / f"{mod.name}.py")
        module = importlib.util.module_from_spec(spec)
        assert spec.loader is not None
        spec.loader.exec_module(module)
        rules.extend(getattr(module, "RULES", []))
    return rules


class ScriptedServer:
    def __init__(self, port: int = 0, keep_alive: bool = False) -> None:
        """keep_alive: answer HTTP/1.1 and keep connections open, as llama.cpp and the providers
        do (a client's pooled connections then outlive a call; HTTP/1.0 closes each one)."""
        self.keep_alive = keep_alive
        self.rules: list[Rule] = plugin_rules() + list(DEFAULT_RULES)
        self.faults: list[str] = []
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.timeout_sleep_s = 3.0
        self.fail_after: int | None = None  # every request after this many answers HTTP 500
        self.fault_rate = 0.0  # share of requests that get a random fault from fault_kinds
        self.fault_kinds: tuple[str, ...] = FAULTS
        self.retry_after_ms = 1000  # what a 429 asks the client to wait
        self.delay_s = 0.0  # every reply waits this long (a slow endpoint)
        self.stream_piece_s = 0.0  # a streamed reply waits this long between chunks
        self.models: list[str] | None = None  # what GET /v1/models lists (None: 404, no listing)
        self.model_lists = 0  # GET /v1/models requests (a run's preflight), kept out of `requests`
        self._rng = random.Random(0)
        # usage accounting: words by default; cost-estimate tests install o200k + chat overhead
        self.count_text: Callable[[str], int] = lambda t: len(t.split())
        self.per_message_tokens = 0
        self.per_request_tokens = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def add_rule(self, pattern: str, reply: Callable[[list[dict[str, str]], dict[str, Any]], str]) -> None:
        self.rules.insert(0, (pattern, reply))

    def inject(self, *faults: str) -> None:
        """Queue faults for the next requests: '429', '500', 'timeout', 'drop', 'malformed',
        'malformed_content'."""
        with self.lock:
            self.faults.extend(faults)

    def set_fault_rate(self, rate: float, seed: int = 0, kinds: tuple[str, ...] = FAULTS) -> None:
        """From now on, each request gets a fault drawn from `kinds` with probability `rate`."""
        with self.lock:
            self.fault_rate, self.fault_kinds, self._rng = rate, kinds, random.Random(seed)

    def count(self, path: str | None = None) -> int:
        with self.lock:
            return sum(1 for r in self.requests if path is None or r["path"] == path)

    def answered(self) -> list[dict[str, Any]]:
        """Requests answered with a complete 200 reply (what a provider bills)."""
        with self.lock:
            return [r for r in self.requests if r.get("status") == 200 and r.get("delivered")]

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _reply_text(self, req: dict[str, Any]) -> str:
        messages = req["messages"]
        prompt = "\n".join(m["content"] for m in messages)
        for pattern, fn in self.rules:
            if re.search(pattern, prompt):
                return fn(messages, req)
        return "scripted reply"

    def chat_body(self, req: dict[str, Any], malformed: bool = False) -> dict[str, Any]:
        """A chat.completion reply (also used for each line of a scripted batch)."""
        text = "{not json at all" if malformed else self._reply_text(req)
        prompt_tokens = self.per_request_tokens + sum(
            self.count_text(m["content"]) + self.per_message_tokens for m in req["messages"])
        return {"id": "scripted", "object": "chat.completion", "created": 0, "model": req["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(text.split()),
                          "total_tokens": prompt_tokens + len(text.split())}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if server.keep_alive else "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the Batch API's polls and downloads
                if self.path.rstrip("/").endswith("/models"):  # a run's preflight: not a model call, not logged
                    with server.lock:
                        server.model_lists += 1
                    if server.models is None:  # like many servers: no listing
                        return self._send(404, {"error": {"message": "no model listing"}})
                    return self._send(200, {"object": "list", "data": [
                        {"id": m, "object": "model", "owned_by": "scripted"} for m in server.models]})
                import scripted_batches

                scripted_batches.get(server, self)

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                if "/files" in self.path or "/batches" in self.path:
                    import scripted_batches

                    return scripted_batches.post(server, self, raw)
                try:
                    req = json.loads(raw)
                except ValueError:  # the client died while sending: nothing arrived to answer
                    return self._drop()
                record: dict[str, Any] = {"path": self.path, "body": req, "headers": dict(self.headers),
                                          "fault": None, "status": None, "delivered": False,
                                          "t": time.monotonic(), "base_url": server.base_url}
                with server.lock:
                    server.requests.append(record)
                    fault = server.faults.pop(0) if server.faults else None
                    if fault is None and server.fault_rate and server._rng.random() < server.fault_rate:
                        fault = server._rng.choice(server.fault_kinds)
                    if server.fail_after is not None and len(server.requests) > server.fail_after:
                        fault = "500"
                    record["fault"] = fault
                if server.delay_s:
                    time.sleep(server.delay_s)
                if fault == "429":
                    return self._send(429, {"error": {"message": "injected 429"}}, record, {
                        "Retry-After": str(max(1, round(server.retry_after_ms / 1000))),
                        "retry-after-ms": str(server.retry_after_ms)})
                if fault == "500":
                    return self._send(500, {"error": {"message": "injected 500"}}, record)
                if fault in {"timeout", "drop"}:
                    if fault == "timeout":
                        time.sleep(server.timeout_sleep_s)  # longer than the client waits
                    return self._drop()
                if self.path.endswith("/embeddings"):
                    inputs = req["input"] if isinstance(req["input"], list) else [req["input"]]
                    data = [{"object": "embedding", "index": i, "embedding": hashed_embedding(t)}
                            for i, t in enumerate(inputs)]
                    used = sum(server.count_text(t) for t in inputs)
                    body: dict[str, Any] | str = {
                        "object": "list", "data": data, "model": req["model"],
                        "usage": {"prompt_tokens": used, "total_tokens": used}}
                else:
                    body = server.chat_body(req, malformed=fault == "malformed_content")
                if req.get("stream") and isinstance(body, dict) and "choices" in body:
                    return self._stream(body, record, cut_short=fault == "malformed")
                if fault == "malformed":  # a reply cut short: not valid JSON, not billable
                    text_body = json.dumps(body)
                    return self._send(200, text_body[: len(text_body) // 2], record, billable=False)
                return self._send(200, body, record)

            def _send(self, status: int, body: dict[str, Any] | str, record: dict[str, Any] | None = None,
                      headers: dict[str, str] | None = None, billable: bool = True) -> None:
                data = body if isinstance(body, str) else json.dumps(body)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data.encode())))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data.encode())
                    self.wfile.flush()
                except OSError:  # the client is gone (killed): nothing was delivered
                    return
                if record is not None:
                    with server.lock:
                        record["status"] = status if billable else f"{status}-malformed"
                        record["delivered"] = True

            def _stream(self, body: dict[str, Any], record: dict[str, Any], cut_short: bool = False) -> None:
                """Server-sent events, one word per chunk (llama.cpp sends one token per chunk);
                `record["pieces_sent"]` counts the chunks written before the client went away.
                A stream the client closes after its first piece counts as delivered (a provider
                bills what it generated); `cut_short` (the malformed fault) closes the stream
                halfway, without a finish reason: not billable."""
                text = body["choices"][0]["message"]["content"]
                pieces = re.findall(r"\S+\s*|\s+", text)
                head = {"id": "scripted", "object": "chat.completion.chunk", "created": 0, "model": body["model"]}
                events = [{**head, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}
                          for p in pieces]
                events.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                if (record["body"].get("stream_options") or {}).get("include_usage"):
                    events.append({**head, "choices": [], "usage": body["usage"]})
                if cut_short:
                    events = events[:max(1, len(pieces) // 2)]
                record["pieces_sent"] = 0
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Connection", "close")  # no length: the close ends the body
                    self.end_headers()
                    for ev in events:
                        self.wfile.write(f"data: {json.dumps(ev)}\n\n".encode())
                        self.wfile.flush()
                        record["pieces_sent"] += 1
                        time.sleep(server.stream_piece_s)
                    if not cut_short:
                        self.wfile.write(b"data: [DONE]\n\n")
                        self.wfile.flush()
                except OSError:  # the client closed the stream
                    if record["pieces_sent"] == 0:
                        return
                finally:
                    self.close_connection = True
                with server.lock:
                    record["status"] = "200-malformed" if cut_short else 200
                    record["delivered"] = True

            def _drop(self) -> None:
                """Close the connection without a reply."""
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)

        return Handler


if __name__ == "__main__":  # python tests/scripted_server.py --port 8765: serve until Ctrl-C
    import argparse

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, default=0)
    with ScriptedServer(ap.parse_args().port) as srv:
        print(srv.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            srv.thread.join()
