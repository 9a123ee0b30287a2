"""OpenAI Batch API mode for stages that need no interactivity (judging, GSW indexing).

Transparent to method and protocol code: in a batched stage, a chat call that misses the cache
is queued instead of sent, and its coroutine waits. When no new call has been queued for
`settle_s` (every task of the stage is waiting), the queue is uploaded as one JSONL file and
submitted as one batch; a poller collects the output into the same model-call cache and wakes
the waiting calls, which then return like any fresh call. Calls that depend on earlier replies
(GSW's Operator after coreference) simply form the next batch. Each submitted batch is recorded
in a journal next to the cache before anything waits on it, so a killed run, rerun, finds its
calls there and resumes polling instead of paying again; a rerun after collection is all hits.
Batched stages need their task concurrency raised (`concurrency.questions`,
`method.max_concurrent_chapters`), since only calls in flight at once can share a batch.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from .errors import ModelCallError
from .usage import current_stage

log = logging.getLogger(__name__)
DONE = "completed"
FAILED = ("failed", "expired", "cancelled", "cancelling")


class BatchJournal:
    """`open_batches.json`: batch id -> endpoint and the cache keys it will answer."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / "open_batches.json"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def load(self) -> dict[str, dict[str, Any]]:
        try:
            return json.loads(self.path.read_text())
        except (FileNotFoundError, ValueError):
            return {}

    def _write(self, data: dict[str, Any]) -> None:
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(self.path)

    def add(self, batch_id: str, endpoint: str, keys: list[str]) -> None:
        with self._lock:
            data = self.load()
            data[batch_id] = {"endpoint": endpoint, "keys": keys, "submitted": time.time()}
            self._write(data)

    def close(self, batch_id: str) -> None:
        with self._lock:
            data = self.load()
            data.pop(batch_id, None)
            self._write(data)


class BatchQueue:
    """One per run; shared by the clients whose calls in `stages` go through the Batch API."""

    def __init__(self, folder: Path, stages: list[str] | tuple[str, ...], poll_s: float = 30.0,
                 settle_s: float = 1.0, max_requests: int = 50_000):
        self.journal = BatchJournal(folder)
        self.stages = set(stages)
        self.poll_s = poll_s
        self.settle_s = settle_s
        self.max_requests = max_requests
        self._queue: dict[str, tuple[Any, dict[str, Any], asyncio.Future]] = {}
        self._waiting: dict[str, asyncio.Future] = {}
        self._last_add = 0.0
        self._flusher: asyncio.Task | None = None
        self._pollers: dict[str, asyncio.Task] = {}

    def covers(self, stage: str | None = None) -> bool:
        return (stage or current_stage()) in self.stages

    async def request(self, client: Any, key: str, req: dict[str, Any]) -> dict[str, Any]:
        """The chat.completion body for `req`, obtained through a (possibly earlier) batch."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future = loop.create_future()
        for batch_id, entry in self.journal.load().items():  # submitted by a run that was killed
            if key in entry["keys"]:
                self._waiting[key] = fut
                self._poll_later(client, batch_id)
                return await fut
        hit = client.cache.get(key)  # collected by a poller between our cache miss and now
        if hit is not None:
            return {"choices": [{"message": {"content": hit["text"]}, "finish_reason": hit.get("finish_reason")}],
                    "usage": {"prompt_tokens": hit["prompt_tokens"], "completion_tokens": hit["completion_tokens"]}}
        self._queue[key] = (client, req, fut)
        self._last_add = loop.time()
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_when_settled())
        return await fut

    def _poll_later(self, client: Any, batch_id: str) -> None:
        if batch_id not in self._pollers or self._pollers[batch_id].done():
            self._pollers[batch_id] = asyncio.create_task(self._poll(client, batch_id))

    async def _flush_when_settled(self) -> None:
        loop = asyncio.get_running_loop()
        while self._queue:
            idle = loop.time() - self._last_add
            if idle < self.settle_s and len(self._queue) < self.max_requests:
                await asyncio.sleep(self.settle_s - idle)
                continue
            items = list(self._queue.items())[: self.max_requests]
            for key, _ in items:
                del self._queue[key]
            try:
                await self._submit(items)
            except Exception as exc:  # noqa: BLE001 - every waiting call learns why
                for _, (_, _, fut) in items:
                    if not fut.done():
                        fut.set_exception(ModelCallError(f"batch submission failed: {exc}"))

    async def _submit(self, items: list[tuple[str, tuple[Any, dict[str, Any], asyncio.Future]]]) -> None:
        client = items[0][1][0]
        api = client._ensure_client()
        lines = "".join(json.dumps({"custom_id": key, "method": "POST", "url": "/v1/chat/completions",
                                    "body": req}) + "\n" for key, (_, req, _) in items)
        upload = await api.files.create(file=("memeval-batch.jsonl", lines.encode()), purpose="batch")
        batch = await api.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                         completion_window="24h")
        self.journal.add(batch.id, str(client.base_url), [k for k, _ in items])
        log.info("submitted batch %s (%d calls, stage %s)", batch.id, len(items), current_stage())
        for key, (_, _, fut) in items:
            self._waiting[key] = fut
        self._poll_later(client, batch.id)

    async def _poll(self, client: Any, batch_id: str) -> None:
        api = client._ensure_client()
        while True:
            batch = await api.batches.retrieve(batch_id)
            if batch.status == DONE or batch.status in FAILED:
                break
            await asyncio.sleep(self.poll_s)
        keys = self.journal.load().get(batch_id, {}).get("keys", [])
        answered: dict[str, dict[str, Any]] = {}
        if batch.status == DONE and batch.output_file_id:
            content = await api.files.content(batch.output_file_id)
            for line in content.text.splitlines():
                rec = json.loads(line) if line.strip() else None
                resp = (rec or {}).get("response") or {}
                if rec and resp.get("status_code") == 200:
                    answered[rec["custom_id"]] = resp["body"]
        for key in keys:
            body = answered.get(key)
            if body is not None:
                client.cache.put(key, _cache_value(body))  # collected: a rerun is free
            fut = self._waiting.pop(key, None)
            if fut is None or fut.done():
                continue
            if body is None:
                fut.set_exception(ModelCallError(f"batch {batch_id} ended {batch.status} without "
                                                 "an answer for this call; rerun to send it again"))
            else:
                fut.set_result(body)
        self.journal.close(batch_id)

    async def aclose(self) -> None:
        for task in [self._flusher, *self._pollers.values()]:
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task


def _cache_value(body: dict[str, Any]) -> dict[str, Any]:
    usage = body.get("usage") or {}
    choice = body["choices"][0]
    return {"text": choice["message"].get("content") or "", "prompt_tokens": int(usage.get("prompt_tokens", 0)),
            "completion_tokens": int(usage.get("completion_tokens", 0)),
            "finish_reason": choice.get("finish_reason"), "via": "batch"}
