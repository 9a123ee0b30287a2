"""OpenAI-compatible chat client: the same code talks to GPT-4o, vLLM or the local llama.cpp server."""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from .budget import prompt_tokens_of
from .cache import CacheBase, ResponseCache, cache_key
from .errors import ConfigError, JsonOutputError
from .gate import CallGate, CallSettings, Paid, Retry
from .loop_clients import LoopClients
from .repeat_stop import RULES, cut_whole
from .streaming import streamed_until_repeat
from .text_format import GRAMMAR_CHOICES, TextFormat, sdk_arguments
from .usage import UsageLedger

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class ChatResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    model: str
    choices: tuple[str, ...] = ()  # every choice when n > 1 was asked for (text is the first)


class ChatModel:
    """Chat completions with cache, retries, bounded concurrency and usage accounting.

    `model` is what the endpoint is asked for; `model_revision` (e.g. a GGUF sha256) joins the
    cache key so that two different files served under one name never share cached answers.
    `settings` (budget, dry run or replay, Batch API queue) says how the run pays; every fresh
    call goes through the client's model_access.gate.CallGate. `grammar`: whether a reply in a
    text format (`complete_format`) is constrained by the format's GBNF grammar: `auto` when the
    endpoint is a local llama.cpp server (`server` set), `gbnf` always (a remote llama.cpp),
    `none` never (plain text, parsed and repaired the same way).
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        model_revision: str | None = None,
        display_name: str | None = None,
        max_concurrency: int = 8,
        max_attempts: int = 6,
        timeout_s: float = 120.0,
        max_tokens: int = 1024,
        json_mode: str = "json_schema",
        json_repair_attempts: int = 2,
        context_window: int | None = None,
        seed: int | None = None,
        backoff_base_s: float = 1.0,
        cache: CacheBase | None = None,
        ledger: UsageLedger | None = None,
        server: Any = None,
        settings: CallSettings | None = None,
        grammar: str = "auto",
    ):
        if json_mode not in {"json_schema", "json_object", "none"}:
            raise ConfigError(f"json_mode must be json_schema, json_object or none, not {json_mode!r}")
        if grammar not in GRAMMAR_CHOICES:
            raise ConfigError(f"grammar must be one of {', '.join(GRAMMAR_CHOICES)}, not {grammar!r}")
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.model_revision = model_revision
        self.display_name = display_name or model
        self.max_concurrency = max_concurrency
        self.max_attempts = max_attempts
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens
        self.json_mode = json_mode
        self.grammar = grammar
        self.json_repair_attempts = json_repair_attempts
        self.context_window = context_window
        self.seed = seed
        self.backoff_base_s = backoff_base_s
        self.gate = CallGate(cache if cache is not None else ResponseCache(None),
                             ledger if ledger is not None else UsageLedger(), settings, max_concurrency)
        self.server = server  # a local server spec the harness starts (serve_at); None for remote endpoints
        self._clients: LoopClients[openai.AsyncOpenAI] = LoopClients()  # one per event loop

    @property
    def cache(self) -> CacheBase:
        return self.gate.cache

    @property
    def ledger(self) -> UsageLedger:
        return self.gate.ledger

    def serve_at(self, base_url: str) -> None:
        """The address of this client's local server, known once the harness has started it."""
        self.base_url = base_url
        self._clients = LoopClients()  # the next call connects there (set before any loop runs)

    # -- readiness -------------------------------------------------------------------------
    def api_key(self) -> str:
        if not self.api_key_env:
            return "not-needed"
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ConfigError(
                f"Model '{self.display_name}' needs an API key: set the environment variable "
                f"{self.api_key_env} (or choose the offline default with llm=local judge=local)."
            )
        return key

    def check_ready(self) -> None:
        """Fail before any call if the endpoint cannot possibly be used."""
        self.api_key()
        if self.server is None and self.base_url is None and self.api_key_env != "OPENAI_API_KEY":
            raise ConfigError(f"Model '{self.display_name}' has no base_url; set llm.base_url.")

    def _ensure_client(self) -> openai.AsyncOpenAI:
        """The running loop's client (model_access.loop_clients: each loop's own, closed there)."""
        return self._clients.get(lambda: openai.AsyncOpenAI(
            api_key=self.api_key(), base_url=self.base_url, max_retries=0, timeout=self.timeout_s))

    async def aclose(self) -> None:
        """Close this loop's HTTP client; call it inside the loop before `asyncio.run` returns."""
        await self._clients.aclose()

    @property
    def takes_grammars(self) -> bool:
        """Whether requests carry a text format's GBNF grammar (llama.cpp's `grammar` field)."""
        return self.grammar == "gbnf" or (self.grammar == "auto" and self.server is not None)

    # -- calls -----------------------------------------------------------------------------
    def _request(self, messages: list[dict[str, str]], max_tokens: int | None,
                 response_format: dict[str, Any] | None, sampling: dict[str, Any] | None = None) -> dict[str, Any]:
        """The request body; `sampling` (temperature, seed, stop, n) overrides the defaults
        (temperature 0, the configured seed) only for what a caller explicitly sets."""
        sampling = {k: v for k, v in (sampling or {}).items() if v is not None}
        unknown = set(sampling) - {"temperature", "seed", "stop", "n"}
        if unknown:
            raise ValueError(f"unsupported sampling parameter(s) {sorted(unknown)}")
        req: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": float(sampling.get("temperature", 0.0)),
            "max_tokens": max_tokens or self.max_tokens,
        }
        seed = sampling.get("seed", self.seed)
        if seed is not None:
            req["seed"] = int(seed)
        if sampling.get("stop"):
            req["stop"] = sampling["stop"]
        if int(sampling.get("n", 1)) != 1:
            req["n"] = int(sampling["n"])
        if response_format is not None:
            req["response_format"] = response_format
        return req

    def _key_payload(self, req: dict[str, Any]) -> dict[str, Any]:
        """What the cache key hashes. Without a pinned revision the model name alone does not say
        which weights answered, so the endpoint joins the key (two servers may serve different
        weights under one name); with a revision it stays out (a local server's port changes)."""
        payload = {"kind": "chat", "revision": self.model_revision, **req}
        endpoint = endpoint_identity(self.model_revision, self.base_url)
        if endpoint is not None:
            payload["endpoint"] = endpoint
        return payload

    async def complete(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int | None = None,
        response_format: dict[str, Any] | None = None,
        sampling: dict[str, Any] | None = None,
        stop_repeats: str | None = None,
        text_format: TextFormat | None = None,
    ) -> ChatResult:
        """One chat completion (temperature 0 unless `sampling` says otherwise), from the cache
        when seen before. `stop_repeats` (a rule of model_access.repeat_stop.RULES) streams the
        reply and ends it at its first repeated item or run of words; the rule joins the key, and
        a call cached whole without the rule is read cut by it.
        `text_format`: the reply's layout (`complete_format`): its grammar joins the request
        where the endpoint takes grammars, and a dry run answers with a placeholder in it."""
        req = self._request(messages, max_tokens, response_format, sampling)
        if text_format is not None and text_format.grammar and self.takes_grammars:
            req["grammar"] = text_format.grammar
        payload = self._key_payload(req)
        whole = None  # the same call made without the rule, stored whole
        if stop_repeats is not None:
            if stop_repeats not in RULES or "n" in req:
                raise ValueError(f"stop_repeats must be one of {sorted(RULES)} (single-choice calls only)")
            whole = cache_key(payload)
            payload["stop_repeats"] = RULES[stop_repeats]
        key = cache_key(payload)
        hit = self.cache.get(key)
        if hit is None and whole is not None:
            # the cut is a pure function of the reply's text, so the rule's reply is that reply cut
            # (read below): turning a rule on after a run began pays only for what the cut changes
            hit = self.cache.get(whole)
        if hit is None:
            async with self.gate.claim([key]) as todo:  # a second job on this node waits, then hits
                if todo:
                    return await self._fresh(key, req, stop_repeats, text_format)
                hit = self.cache.get(key)
                assert hit is not None
        self.gate.hit(self.display_name, hit["prompt_tokens"], hit["completion_tokens"],
                      notice=lambda dry: dry.hit(self, req, hit))
        return ChatResult(_cut(hit["text"], stop_repeats), hit["prompt_tokens"], hit["completion_tokens"], True,
                          self.display_name, tuple(hit.get("choices") or ()))

    async def _fresh(self, key: str, req: dict[str, Any], stop_repeats: str | None = None,
                     text_format: TextFormat | None = None) -> ChatResult:
        """Pay for one call through the gate (the caller holds the key's in-flight lock)."""

        def connect() -> Any:
            client = self._ensure_client()

            async def call() -> Any:
                if stop_repeats is not None:
                    return await streamed_until_repeat(client, req, stop_repeats)
                return await client.chat.completions.create(**sdk_arguments(req))
            return call

        return await self.gate.pay(
            self.display_name, (prompt_tokens_of(req["messages"]), req["max_tokens"]), connect,
            lambda resp: _paid(key, req, resp, self.display_name),
            dry=lambda recorder: recorder.chat(self, req, text_format),
            retry=Retry(f"chat[{self.display_name}]", self.max_attempts, self.backoff_base_s),
            batched=lambda queue: self._batched(queue, key, req, stop_repeats))

    async def _batched(self, queue: Any, key: str, req: dict[str, Any],
                       stop_repeats: str | None = None) -> Paid[ChatResult]:
        """A fresh call through the Batch API queue; the queue writes the cache on collection.
        A batch cannot be streamed, so a repeat-stop rule cuts the whole reply afterwards (the
        same text; only the tokens are not saved)."""
        body = await queue.request(self, key, req)
        usage = body.get("usage") or {}
        pt, ct = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
        text = _cut(body["choices"][0]["message"].get("content") or "", stop_repeats)
        return Paid(ChatResult(text, pt, ct, False, self.display_name), pt, ct)

    def _response_format(self, output_model: type[BaseModel]) -> dict[str, Any] | None:
        if self.json_mode == "json_schema":
            return {"type": "json_schema", "json_schema": {
                "name": output_model.__name__, "schema": output_model.model_json_schema(), "strict": False}}
        if self.json_mode == "json_object":
            return {"type": "json_object"}
        return None

    async def complete_json(
        self,
        messages: list[dict[str, str]],
        output_model: type[M],
        *,
        max_tokens: int | None = None,
        stop_repeats: str | None = None,
    ) -> tuple[M, ChatResult]:
        """Structured output validated against a pydantic model, with a bounded repair loop.

        Each repair attempt shows the model its invalid output and the validation error; every
        attempt is cached, so a rerun replays the same sequence without new calls.
        `stop_repeats`: a repeat_stop rule name, as for `complete` ("json_items" ends a reply at
        its first repeated top-level list item).
        """
        fmt = self._response_format(output_model)

        def ask(convo: list[dict[str, str]]) -> Awaitable[ChatResult]:
            return self.complete(convo, max_tokens=max_tokens, response_format=fmt, stop_repeats=stop_repeats)

        def repair(error: str) -> str:
            return ("That reply is not valid JSON for the required schema (" + " ".join(error.splitlines()[:6])
                    + "). Reply again with only the corrected JSON object.")

        return await self._validated(messages, ask, lambda text: output_model.model_validate_json(
            _strip_fences(text)), repair, f"{output_model.__name__} JSON")

    async def complete_format(
        self,
        messages: list[dict[str, str]],
        text_format: TextFormat[M],
        *,
        max_tokens: int | None = None,
        stop_repeats: str | None = None,
    ) -> tuple[M, ChatResult]:
        """Structured output in a text layout of the caller's (model_access.text_format), with
        the same bounded repair loop as `complete_json`: a reply the format's decoder refuses is
        shown back with the decoder's message (which names the bad line). The format's grammar
        constrains decoding where the endpoint takes grammars (`grammar`); elsewhere the reply
        is plain text, validated the same way.
        """
        def ask(convo: list[dict[str, str]]) -> Awaitable[ChatResult]:
            return self.complete(convo, max_tokens=max_tokens, stop_repeats=stop_repeats, text_format=text_format)

        def repair(error: str) -> str:
            return ("That reply does not follow the required format (" + " ".join(error.splitlines()[:6])
                    + "). Reply again with the whole corrected reply only, in the same format.")

        return await self._validated(messages, ask, text_format.decode, repair,
                                     f"{text_format.model.__name__} reply ({text_format.name})")

    async def _validated(self, messages: list[dict[str, str]],
                         ask: Callable[[list[dict[str, str]]], Awaitable[ChatResult]],
                         parse: Callable[[str], M], repair: Callable[[str], str], what: str) -> tuple[M, ChatResult]:
        """Ask, parse, and on a refused reply ask again with the reply and the error appended, at
        most `json_repair_attempts` times; every attempt is cached, so a rerun replays them."""
        convo = list(messages)
        raw_outputs: list[str] = []
        for _attempt in range(self.json_repair_attempts + 1):
            result = await ask(convo)
            raw_outputs.append(result.text)
            try:
                return parse(result.text), result
            except (ValidationError, ValueError) as exc:
                convo = [*convo,  # keep earlier attempts: each retry is a new request, not a cache hit
                         {"role": "assistant", "content": result.text},
                         {"role": "user", "content": repair(str(exc))}]
        raise JsonOutputError(
            f"chat[{self.display_name}]: no valid {what} after "
            f"{len(raw_outputs)} attempt(s); last output began: {raw_outputs[-1][:200]!r}",
            raw_outputs,
        )

    def describe(self) -> dict[str, Any]:
        return {"model": self.model, "display_name": self.display_name, "revision": self.model_revision,
                "base_url": self.base_url, "json_mode": self.json_mode}


def _paid(key: str, req: dict[str, Any], resp: Any, who: str) -> Paid[ChatResult]:
    """A chat completion as the gate stores it: the reply, its tokens and the cache entry."""
    usage = resp.usage
    pt = int(getattr(usage, "prompt_tokens", 0) or 0)
    ct = int(getattr(usage, "completion_tokens", 0) or 0)
    text = resp.choices[0].message.content or ""
    entry = {"text": text, "prompt_tokens": pt, "completion_tokens": ct,
             "finish_reason": resp.choices[0].finish_reason}
    if getattr(resp, "cut_at", None) is not None:
        entry["cut_at"] = resp.cut_at  # offset of the repeat in the streamed reply
    choices: tuple[str, ...] = ()
    if "n" in req:
        choices = tuple(c.message.content or "" for c in sorted(resp.choices, key=lambda c: c.index))
        entry["choices"] = list(choices)
    return Paid(ChatResult(text, pt, ct, False, who, choices), pt, ct, {key: entry})


def _cut(text: str, rule: str | None) -> str:
    """A whole reply cut by the rule (a streamed reply is already cut: the cut is idempotent).
    A Batch API reply is stored whole by the queue, so it is cut here, on every read."""
    return text if rule is None else cut_whole(rule, text)


def endpoint_identity(revision: str | None, base_url: str | None) -> str | None:
    """The endpoint part of a cache key: only when no revision is pinned and an endpoint is set
    (the default OpenAI endpoint keeps its keys)."""
    if revision is not None or not base_url:
        return None
    return base_url.rstrip("/")


def _strip_fences(text: str) -> str:
    """Accept a JSON object wrapped in Markdown fences or surrounded by prose."""
    t = text.strip()
    if t.startswith("```"):
        t = t.split("\n", 1)[1] if "\n" in t else t
        t = t.rsplit("```", 1)[0]
    start, end = t.find("{"), t.rfind("}")
    if start != -1 and end > start:
        candidate = t[start:end + 1]
        try:
            json.loads(candidate)
            return candidate
        except ValueError:
            pass
    return t
