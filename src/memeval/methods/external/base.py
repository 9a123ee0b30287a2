"""ExternalMethod: a baseline that runs as the official package, in its own environment.

The plugin starts one worker per corpus (inside the package's venv), points the package at a
loopback proxy that serves the framework's own chat models and embedder (so caching, usage and
cost stay in the framework; index-time calls go to the run's indexing model, the rest to the
answering model), indexes once into the corpus' index folder, and asks the worker for
the package's own retrieval context per question. The harness then answers with the shared
model. The worker never answers; it returns the context, the chapters it came from (within the
context cap) and what the package counted itself.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from memeval.datasets.types import Corpus, Question
from memeval.methods.base import MemoryMethod, NativeAnswer, Retrieval, Services
from memeval.model_access.repeat_stop import RULES

from . import envs
from .cost_model import CostModel
from .proxy import ModelProxy
from .worker_protocol import WorkerClient, WorkerError

WORKERS = Path(__file__).parent / "workers"
ANSWER_WITH = ("shared", "package")
DONE = "index_done.json"


def corpus_fingerprint(corpus: Corpus) -> str:
    h = hashlib.sha256()
    for u in corpus.units:
        h.update(json.dumps([u.id, u.title, u.timestamp, u.text], ensure_ascii=False).encode())
    return h.hexdigest()[:16]


def unit_payload(corpus: Corpus) -> list[dict[str, Any]]:
    """Units as the worker sees them: id, title and text, in corpus order."""
    out = []
    for u in corpus.units:
        title = u.title or f"Session {u.id}"
        if u.timestamp:
            title += f" ({u.timestamp})"
        out.append({"id": u.id, "title": title, "text": u.text, "position": u.position})
    return out



@dataclass
class WorkerIndex:
    """What build_index returns: the corpus and the live worker holding its index."""

    corpus: Corpus
    worker: WorkerClient
    info: dict[str, Any]
    egress_log: Path | None = None  # the egress guard's record for this worker


class ExternalMethod(MemoryMethod):
    """Subclasses name their environment and the package settings that define the index."""

    # The package's environment (envs.py builds it once, in a folder named by a hash of the spec)
    # and the documented model of its calls that `memeval estimate` prices (cost_model.py; None:
    # the estimate prices its answers and judgments and says it has no model of the rest).
    env_spec: ClassVar[envs.EnvSpec | None] = None
    cost_model: ClassVar[CostModel | None] = None
    # Context sections: a multiline regex whose group "name" names a section header, and the
    # sections whose text comes only from the reported (capped) units. Everything else (and text
    # before the first header) is reported to the harness as uncapped. None: all text is capped.
    section_header: ClassVar[str | None] = None
    capped_sections: ClassVar[tuple[str, ...]] = ()

    def __init__(self, services: Services, name: str | None = None, setup: str = "auto",
                 chat_alias: str = "gpt-4o", embedding_alias: str = "text-embedding-3-small",
                 index_timeout_s: float | None = None, retrieve_timeout_s: float | None = 1800.0,
                 answer_with: str = "shared", stop_repeats: str | None = None):
        super().__init__(services, name)
        if stop_repeats is not None and stop_repeats not in RULES:
            raise ValueError(f"stop_repeats must be null (the package's replies as the model wrote them) or one "
                             f"of {sorted(RULES)} (model_access.repeat_stop), not {stop_repeats!r}")
        self.stop_repeats = stop_repeats
        if setup not in {"auto", "require"}:
            raise ValueError("setup must be 'auto' (create the environment if missing) or 'require'")
        if answer_with not in ANSWER_WITH:
            raise ValueError(f"answer_with must be one of {ANSWER_WITH}, not {answer_with!r}: 'shared' (the "
                             "harness's prompt, the default) or 'package' (the package's own answer prompt)")
        self.answer_with = answer_with
        self.setup = setup
        self.chat_alias = chat_alias
        self.embedding_alias = embedding_alias
        self.index_timeout_s = index_timeout_s
        self.retrieve_timeout_s = retrieve_timeout_s
        self._proxy: ModelProxy | None = None
        self._job_lock: asyncio.Lock | None = None
        self._workers: list[WorkerClient] = []

    @property
    def env_name(self) -> str:
        """The environment's name (its spec's): the worker's and the setup script's name for it."""
        return self._spec().name

    def _spec(self) -> envs.EnvSpec:
        if self.env_spec is None:
            raise TypeError(f"{type(self).__name__} declares no env_spec (an EnvSpec naming its lock and worker)")
        return self.env_spec

    # -- what subclasses provide ----------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        """The package settings sent to the worker (the paper's Tables 7-9)."""
        return {}

    def reply_ceiling(self) -> int | None:
        """The most tokens the proxy lets any chat reply ask for, whatever the package requests
        (None: the package's own request stands)."""
        return None

    def worker_env_extra(self) -> dict[str, str]:
        """Environment variables the package needs besides worker_env's (telemetry switches)."""
        return {}

    def units_for_worker(self, corpus: Corpus) -> list[dict[str, Any]]:
        """The units as the worker receives them (a package may need more, e.g. dates)."""
        return unit_payload(corpus)

    def index_payload(self, corpus: Corpus) -> dict[str, Any]:
        """What the worker's `index` and `load` jobs receive: the units (mem0: its planned adds)."""
        return {"units": self.units_for_worker(corpus)}

    def params(self) -> dict[str, Any]:
        # stop_repeats joins the index's identity only when set (indexes built before it keep
        # theirs), as the rule's versioned name: a changed rule builds its own index
        return {"package_env": f"{self.env_name}-{self._spec().fingerprint()}",
                "chat_alias": self.chat_alias, "embedding_alias": self.embedding_alias,
                **({"stop_repeats": RULES[self.stop_repeats]} if self.stop_repeats is not None else {}),
                **self.settings()}

    def uncapped_text(self, context: str) -> list[str]:
        """The parts of the package's context that no chapter list covers (for the cap audit)."""
        if self.section_header is None:
            return []
        marks = list(re.finditer(self.section_header, context))
        if not marks:
            return [context] if context.strip() else []
        parts = [context[:marks[0].start()]] if context[:marks[0].start()].strip() else []
        for i, m in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(context)
            if m.group("name").strip() not in self.capped_sections:
                parts.append(context[m.start():end])
        return parts

    # -- plumbing ---------------------------------------------------------------------------
    def _env(self) -> Path:
        path = envs.find_env(self._spec())
        if path is not None:
            return path
        if self.setup == "require":
            from memeval.model_access.errors import ConfigError

            raise ConfigError(f"The {self.env_name} environment is not set up: run "
                              f"`python scripts/setup_baselines.py {self.env_name}`.")
        return envs.ensure_spec(self._spec(), log=lambda m: print(m, file=sys.stderr, flush=True))

    async def _aenv(self) -> Path:
        """Find or create the environment without blocking the event loop (setup takes minutes)."""
        return await asyncio.to_thread(self._env)

    def _proxy_url(self) -> str:
        if self._proxy is None:
            # index-time chat calls to the indexing model, query-time ones to the answering model
            self._proxy = ModelProxy(self.services.llm, self.services.embedder, index_chat=self.services.index_llm,
                                     reply_ceiling=self.reply_ceiling(), stop_repeats=self.stop_repeats)
            self._proxy.start()
        return self._proxy.base_url

    async def _job(self, index: WorkerIndex | WorkerClient, op: str, payload: dict[str, Any],
                   timeout_s: float | None) -> dict[str, Any]:
        """One job at a time per method: the proxy attributes calls to the job that is running."""
        worker = index.worker if isinstance(index, WorkerIndex) else index
        if self._job_lock is None:
            self._job_lock = asyncio.Lock()
        async with self._job_lock:
            assert self._proxy is not None
            self._proxy.context = contextvars.copy_context()
            self._proxy.take_requested()  # start this job's tally afresh
            try:
                reply = await worker.acall(op, payload, timeout_s)
            finally:
                self._proxy.context = None
            return {**reply, "sampling_requested": self._proxy.take_requested()}

    async def build_index(self, corpus: Corpus) -> WorkerIndex:
        env_path = await self._aenv()
        store = self.services.store(corpus.id)
        # absolute: the worker runs in its own cwd, where a relative path would put the package's
        # files beside it (under cwd/), out of reach of the partial-index cleanup below
        folder = store.path("package").resolve()
        fingerprint = corpus_fingerprint(corpus)
        done = store.load_json(DONE) if store.exists(DONE) else None
        if done and not (folder.is_dir() and any(folder.iterdir())):
            done = None  # the package's files are gone (or were written elsewhere before 2026-11-30): rebuild
        if not (done and done.get("corpus") == fingerprint) and folder.exists():
            # an indexing that was interrupted (a kill) left a partial index: the package would
            # add to it and build a different one; start clean (its model calls replay from the cache)
            shutil.rmtree(folder)
        folder.mkdir(parents=True, exist_ok=True)
        url = self._proxy_url()
        # what the egress guard refused (workers/egress_guard/, on every worker): this worker's only
        egress_log = store.path("egress.jsonl").resolve()
        egress_log.unlink(missing_ok=True)
        worker = WorkerClient(
            self.env_name, envs.env_python(env_path), WORKERS / self._spec().worker,
            envs.worker_env(env_path, self.worker_env_extra(), egress_log=egress_log), cwd=store.path("cwd"),
            log_path=store.path("worker.log"))
        self._workers.append(worker)
        opened = await self._job(worker, "open", {
            "index_dir": str(folder), "settings": self.settings(),
            "llm": {"base_url": url, "model": self.chat_alias},
            "embedding": {"base_url": url, "model": self.embedding_alias}}, 600)
        if done and done.get("corpus") == fingerprint:
            reply = await self._job(worker, "load", self.index_payload(corpus), 600)
            info = {**done, "reused": True, "load_seconds": reply.get("seconds")}
            info["egress_refused"] = len(envs.egress_attempts(egress_log))
        else:
            reply = await self._job(worker, "index", self.index_payload(corpus), self.index_timeout_s)
            info = {"corpus": fingerprint, "units": len(corpus.units), "seconds": reply.get("seconds"),
                    "package": opened["result"], "index": reply["result"],
                    "sampling_requested": reply["sampling_requested"],
                    "egress_refused": len(envs.egress_attempts(egress_log))}
            store.save_json(DONE, info)
            info = {**info, "reused": False}
        return WorkerIndex(corpus, worker, info, egress_log)

    async def retrieve(self, index: WorkerIndex, question: Question) -> Retrieval:
        cap = self.services.cap.max_units
        reply = await self._job(index, "retrieve", {"question": question.text, "question_id": question.id,
                                                    "max_units": cap}, self.retrieve_timeout_s)
        res = reply["result"]
        units = list(dict.fromkeys(res.get("units") or []))
        known = {u.id for u in index.corpus.units}
        unknown = [u for u in units if u not in known]
        if unknown:
            raise WorkerError(f"{self.env_name} worker named units not in corpus {index.corpus.id}: {unknown[:5]}")
        extras = {"package": self.env_name, "worker_seconds": reply.get("seconds"),
                  "uncapped_text": self.uncapped_text(res["context_text"]),
                  "sampling_requested": reply["sampling_requested"],
                  **{k: v for k, v in res.items() if k not in {"context_text", "units"}}}
        refused = len(envs.egress_attempts(index.egress_log)) if index.egress_log else 0
        if refused:  # the worker's refused connections so far: the package phoned home
            extras["egress_refused"] = refused
        return Retrieval(res["context_text"], units, extras)

    async def answer(self, index: WorkerIndex, question: Question, retrieval: Retrieval) -> NativeAnswer | None:
        """With `answer_with: package`, the package answers with its own prompt (GraphRAG local
        search, LightRAG's query, HippoRAG 2's QA) from its capped context, through the proxy (so
        through the shared answering model, its cache and its ledger)."""
        if self.answer_with != "package":
            return None
        reply = await self._job(index, "answer", {"question": question.text, "question_id": question.id,
                                                  "max_units": self.services.cap.max_units},
                                self.retrieve_timeout_s)
        res = reply["result"]
        extras = {"answer_with": "package", "package": self.env_name, "worker_seconds": reply.get("seconds"),
                  "sampling_requested": reply["sampling_requested"],
                  **{k: v for k, v in res.items() if k not in {"answer", "context_text"}}}
        if "context_text" in res:  # the context the package answered from, next to the one retrieved
            extras["same_context_as_retrieved"] = res["context_text"] == retrieval.context_text
        return NativeAnswer(str(res["answer"]), extras)

    def close(self) -> None:
        """Stop the workers and the proxy (also done at exit by finalizers)."""
        for w in self._workers:
            w.close()
        self._workers.clear()
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None
