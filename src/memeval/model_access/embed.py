"""Embedders behind one cached interface: OpenAI-compatible endpoints, Voyage, or in-process models.

Long inputs: a text longer than the embedder reads (`max_input_tokens`) is not cut. It is split
into its paragraphs (non-empty lines; a paragraph still too long into sentence windows, then
word windows), each piece is embedded, and the text's vector is the mean of the L2-normalised
piece vectors (re-normalised when `normalize`). Every caller gets this, in process or over the
loopback endpoints the baselines use, so no method silently embeds only a chapter's first lines.
`pool_long_inputs=False` restores the model's own truncation.
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from .cache import CacheBase, ResponseCache, cache_key
from .chat import endpoint_identity
from .errors import ConfigError
from .gate import CallGate, CallSettings, Paid
from .loop_clients import LoopClients
from .retry import with_retries
from .tokenizer import count_tokens
from .usage import UsageLedger


class Embedder(ABC):
    """Caches each text's vector; subclasses embed one uncached batch. Every uncached batch is
    paid through the client's model_access.gate.CallGate, with the run's `settings`."""

    def __init__(self, model: str, model_revision: str | None = None, batch_size: int = 64,
                 max_concurrency: int = 4, normalize: bool = True, display_name: str | None = None,
                 max_input_tokens: int | None = None, pool_long_inputs: bool = True,
                 cache: CacheBase | None = None, ledger: UsageLedger | None = None,
                 settings: CallSettings | None = None):
        self.model = model
        self.max_input_tokens = max_input_tokens  # what the model reads; longer texts are pooled
        self.pool_long_inputs = pool_long_inputs
        self.model_revision = model_revision
        self.batch_size = batch_size
        self.max_concurrency = max_concurrency
        self.normalize = normalize
        self.display_name = display_name or model
        self.gate = CallGate(cache if cache is not None else ResponseCache(None),
                             ledger if ledger is not None else UsageLedger(), settings, max_concurrency)

    @property
    def cache(self) -> CacheBase:
        return self.gate.cache

    @property
    def ledger(self) -> UsageLedger:
        return self.gate.ledger

    def known_dimension(self) -> int | None:
        """The vectors' length when known without a paid call (an estimate's placeholder vectors
        must match the cached ones they are compared with); None when unknown."""
        return getattr(self, "dimensions", None)

    def check_ready(self) -> None:
        """Raise ConfigError if the embedder cannot be used (missing key, missing package)."""
        return None

    async def aclose(self) -> None:
        """Close this loop's HTTP client (none for in-process models); call it inside the loop
        before `asyncio.run` returns, so no pooled connection outlives its loop."""
        clients = getattr(self, "_clients", None)
        if clients is not None:
            await clients.aclose()

    @abstractmethod
    async def _embed_batch(self, texts: list[str], input_type: str) -> tuple[np.ndarray, int]:
        """Return (vectors [n, d], tokens billed) for texts not in the cache."""

    def _key(self, text: str, input_type: str) -> str:
        payload = {"kind": "embed", "model": self.model, "revision": self.model_revision,
                   "input_type": input_type, "text": text}
        endpoint = endpoint_identity(self.model_revision, getattr(self, "base_url", None))
        if endpoint is not None:  # unpinned weights: which server embedded it matters
            payload["endpoint"] = endpoint
        return cache_key(payload)

    def input_tokens(self, text: str) -> int:
        """Tokens the model would read from `text` untruncated (o200k_base unless overridden)."""
        from .tokenizer import count_tokens

        return count_tokens(text)

    def _fits(self, text: str) -> bool:
        limit = self.max_input_tokens
        return limit is None or len(text.encode()) + 2 <= limit or self.input_tokens(text) <= limit

    def pieces(self, text: str) -> list[str]:
        """The text itself when it fits, else its paragraphs (long ones cut into windows)."""
        if not self.pool_long_inputs or self._fits(text):
            return [text]
        out: list[str] = []
        for para in (p.strip() for p in text.splitlines()):
            if para:
                out.extend([para] if self._fits(para) else self._windows(para))
        return out or [text]

    def _windows(self, para: str) -> list[str]:
        """Consecutive sentences packed up to the limit; a sentence too long is cut by words."""
        units: list[str] = []
        for sent in re.split(r"(?<=[.!?])\s+", para):
            if self._fits(sent):
                units.append(sent)
                continue
            words = sent.split()
            cur: list[str] = []
            for w in words:
                if cur and not self._fits(" ".join([*cur, w])):
                    units.append(" ".join(cur))
                    cur = []
                cur.append(w)
            if cur:
                units.append(" ".join(cur))
        windows: list[str] = []
        for u in units:
            if windows and self._fits(windows[-1] + " " + u):
                windows[-1] += " " + u
            else:
                windows.append(u)
        return windows

    async def embed(self, texts: list[str], input_type: str = "document") -> np.ndarray:
        """Vectors for `texts` (rows L2-normalised when `normalize`); input_type: document|query.

        A text longer than `max_input_tokens` gets the mean of its paragraphs' normalised vectors.
        """
        split = [self.pieces(t) for t in texts]
        if all(len(p) == 1 for p in split):
            return await self._embed_exact(texts, input_type)
        flat = list(dict.fromkeys(p for ps in split for p in ps))
        vecs = await self._embed_exact(flat, input_type)
        unit = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        row = {p: i for i, p in enumerate(flat)}
        mat = np.vstack([unit[[row[p] for p in ps]].mean(axis=0) if len(ps) > 1 else vecs[row[ps[0]]]
                         for ps in split]).astype(np.float32)
        if self.normalize:
            mat = mat / np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-12)
        return mat

    async def _embed_exact(self, texts: list[str], input_type: str) -> np.ndarray:
        """Vectors of the texts as given (the model truncates what it cannot read), cached per text."""
        keys = [self._key(t, input_type) for t in texts]
        out: list[np.ndarray | None] = []
        missing: dict[str, int] = {}
        for i, k in enumerate(keys):
            hit = self.cache.get(k)
            if hit is None:
                out.append(None)
                missing.setdefault(k, i)
            else:
                out.append(np.frombuffer(base64.b64decode(hit["v"]), dtype=np.float32))
        hit_counted = [False]  # one cache hit per call that reads any vector from the cache

        def count_hit() -> None:
            if not hit_counted[0]:
                hit_counted[0] = True
                self.gate.hit(self.display_name, 0, 0)

        if len(texts) - len(missing) > 0:
            count_hit()
        todo = list(missing.items())
        fresh: dict[str, np.ndarray] = {}  # paid now, or a dry run's placeholders

        async def run(batch: list[tuple[str, int]]) -> None:
            async with self.gate.claim([k for k, _ in batch]) as still:  # another job may have paid
                if len(still) < len(batch):  # it did while this call waited: a hit, as for chat,
                    count_hit()  # so which of two jobs paid does not change what each one did
                batch = [(k, i) for k, i in batch if k in still]
                if batch:
                    fresh.update(await pay(batch))

        async def pay(batch: list[tuple[str, int]]) -> dict[str, np.ndarray]:
            batch_keys, batch_texts = [k for k, _ in batch], [texts[i] for _, i in batch]

            def placeholders(recorder: Any) -> dict[str, np.ndarray]:  # counted, never sent or cached
                dims = {len(v) for v in out if v is not None}
                vecs = recorder.embed(self, batch_texts, dims.pop() if dims else self.known_dimension(),
                                      keys=batch_keys)
                return {k: np.asarray(v, dtype=np.float32) for k, v in zip(batch_keys, vecs, strict=True)}

            def read(reply: tuple[np.ndarray, int]) -> Paid[dict[str, np.ndarray]]:
                vecs, tokens = reply
                v32 = {k: np.asarray(v, dtype=np.float32) for k, v in zip(batch_keys, vecs, strict=True)}
                values = {k: {"v": base64.b64encode(v.tobytes()).decode("ascii")} for k, v in v32.items()}
                return Paid(v32, tokens, 0, values)

            return await self.gate.pay(
                self.display_name, (sum(count_tokens(t) for t in batch_texts), 0),
                lambda: lambda: self._embed_batch(batch_texts, input_type), read, dry=placeholders)

        batches = [todo[s:s + self.batch_size] for s in range(0, len(todo), self.batch_size)]
        await asyncio.gather(*(run(b) for b in batches))
        rows: list[np.ndarray] = []
        for vec, k in zip(out, keys, strict=True):
            if vec is None and k in fresh:
                vec = fresh[k]
            elif vec is None:
                hit = self.cache.get(k)
                assert hit is not None
                vec = np.frombuffer(base64.b64decode(hit["v"]), dtype=np.float32)
            rows.append(vec)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        mat = np.vstack(rows).astype(np.float32)
        if self.normalize:
            norms = np.linalg.norm(mat, axis=1, keepdims=True)
            mat = mat / np.maximum(norms, 1e-12)
        return mat

    def describe(self) -> dict[str, Any]:
        return {"class": type(self).__name__, "model": self.model, "revision": self.model_revision,
                "long_inputs": "paragraph mean" if self.pool_long_inputs else "truncated",
                "max_input_tokens": self.max_input_tokens}


class OpenAICompatibleEmbedder(Embedder):
    """/v1/embeddings on OpenAI or any compatible server (llama.cpp, vLLM, the local endpoint)."""

    def __init__(self, model: str, base_url: str | None = None,
                 api_key_env: str | None = "OPENAI_API_KEY", dimensions: int | None = None,
                 max_attempts: int = 6, timeout_s: float = 120.0, backoff_base_s: float = 1.0,
                 server: Any = None, **kw: Any):
        super().__init__(model, **kw)
        self.timeout_s = timeout_s
        self.backoff_base_s = backoff_base_s
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.dimensions = dimensions
        self.max_attempts = max_attempts
        self.server = server  # a local server spec the harness starts (serve_at)
        self._clients: LoopClients[Any] = LoopClients()  # one per event loop

    def serve_at(self, base_url: str) -> None:
        """The address of this embedder's local server, known once the harness has started it."""
        self.base_url = base_url
        self._clients = LoopClients()

    def check_ready(self) -> None:
        if self.api_key_env and not os.environ.get(self.api_key_env):
            raise ConfigError(f"Embedder '{self.display_name}' needs an API key: set "
                              f"{self.api_key_env} (or use the offline default embedder=local).")

    async def _embed_batch(self, texts: list[str], input_type: str) -> tuple[np.ndarray, int]:
        import openai

        key = os.environ.get(self.api_key_env, "") if self.api_key_env else "not-needed"
        client = self._clients.get(lambda: openai.AsyncOpenAI(
            api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout_s))
        kwargs: dict[str, Any] = {"model": self.model, "input": texts}
        if self.dimensions:
            kwargs["dimensions"] = self.dimensions

        async def call() -> Any:
            return await client.embeddings.create(**kwargs)

        resp = await with_retries(call, what=f"embed[{self.display_name}]", max_attempts=self.max_attempts,
                                  base_s=self.backoff_base_s)
        vecs = np.array([d.embedding for d in sorted(resp.data, key=lambda d: d.index)], dtype=np.float32)
        tokens = int(getattr(resp.usage, "prompt_tokens", 0) or 0)
        return vecs, tokens


class VoyageEmbedder(Embedder):
    """Voyage AI embeddings (voyage-3 in the GSW paper); query/document input types are honoured."""

    def __init__(self, model: str = "voyage-3", api_key_env: str = "VOYAGE_API_KEY", **kw: Any):
        kw.setdefault("batch_size", 128)
        super().__init__(model, **kw)
        self.api_key_env = api_key_env
        self._clients: LoopClients[Any] = LoopClients()  # one per event loop

    def check_ready(self) -> None:
        if not os.environ.get(self.api_key_env):
            raise ConfigError(f"Embedder '{self.display_name}' needs an API key: set {self.api_key_env}.")

    async def _embed_batch(self, texts: list[str], input_type: str) -> tuple[np.ndarray, int]:
        import voyageai

        client = self._clients.get(
            lambda: voyageai.AsyncClient(api_key=os.environ[self.api_key_env], max_retries=0))

        async def call() -> Any:
            return await client.embed(texts, model=self.model, input_type=input_type)

        resp = await with_retries(call, what=f"embed[{self.display_name}]")
        return np.array(resp.embeddings, dtype=np.float32), int(resp.total_tokens or 0)
