"""Worker side of the JSON-lines protocol (standard library only: runs in every baseline env).

The protocol channel is a private duplicate of the original stdout; file descriptor 1 is then
pointed at stderr, so whatever a package prints (Python or C level) lands in the log instead of
corrupting the protocol. One event loop lives as long as the worker, because the packages keep
loop-bound state (locks, clients, storages) between indexing and querying.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import signal
import sys
import threading
import time
import traceback
import urllib.request
from collections.abc import Callable
from typing import Any

Handler = Callable[[dict[str, Any]], Any]
KEY = "sk-memeval-local-proxy"  # the packages insist on an API key; the framework's proxy ignores it


def embedding_dimension(base_url: str, model: str) -> int:
    """The proxy's embedding width (one probe call, cached like any other): the packages need it
    before their vector stores are created."""
    req = urllib.request.Request(base_url.rstrip("/") + "/embeddings", method="POST",
                                 data=json.dumps({"model": model, "input": ["dimension probe"]}).encode(),
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"})
    with urllib.request.urlopen(req, timeout=600) as resp:
        return len(json.loads(resp.read())["data"][0]["embedding"])


def log(*parts: object) -> None:
    print("[worker]", *parts, file=sys.stderr, flush=True)


def _watch_parent(poll_s: float = 2.0) -> None:
    """Die with the framework: a worker busy in a long job never reads its closed stdin."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(poll_s)
            if os.getppid() != parent:
                log("framework process is gone; stopping")
                os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def serve(handlers: dict[str, Handler]) -> None:
    """Answer jobs from stdin until 'shutdown' or end of input."""
    _watch_parent()
    channel = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    for raw in sys.stdin:
        if not raw.strip():
            continue
        msg = json.loads(raw)
        op = msg.get("op")
        t0 = time.perf_counter()
        if op == "shutdown":
            channel.write(json.dumps({"id": msg.get("id"), "ok": True, "result": {}}) + "\n")
            break
        try:
            if op == "ping":
                result: Any = {"python": sys.version.split()[0], "pid": os.getpid()}
            elif op not in handlers:
                raise KeyError(f"unknown op {op!r}; this worker knows {sorted(handlers)}")
            else:
                result = handlers[op](msg.get("payload") or {})
                if inspect.isawaitable(result):
                    result = loop.run_until_complete(result)
            reply = {"id": msg.get("id"), "ok": True, "result": result,
                     "seconds": round(time.perf_counter() - t0, 3)}
        except Exception as exc:  # every failure goes back to the framework with its traceback
            tb = traceback.format_exc()
            log(f"op {op} failed:\n{tb}")
            reply = {"id": msg.get("id"), "ok": False, "error": f"{type(exc).__name__}: {exc}",
                     "traceback": tb, "seconds": round(time.perf_counter() - t0, 3)}
        channel.write(json.dumps(reply, ensure_ascii=False, default=str) + "\n")
        channel.flush()
    closer = handlers.get("close")
    if closer is not None:
        try:
            out = closer({})
            if inspect.isawaitable(out):
                loop.run_until_complete(out)
        except Exception:
            log("close failed:\n" + traceback.format_exc())
    loop.close()


def chapters_in_order(unit_ids: list[str]) -> list[str]:
    """Distinct unit ids in first-seen order."""
    return list(dict.fromkeys(u for u in unit_ids if u))


def capped_units(units: list[str], cap: int | None) -> tuple[set[str], list[str]] | None:
    """The context cap over units in rank order: (the first `cap` kept, the rest dropped in
    order), or None when they already fit (or there is no cap)."""
    if cap is None or len(units) <= cap:
        return None
    keep = set(units[:cap])
    return keep, [u for u in units if u not in keep]
