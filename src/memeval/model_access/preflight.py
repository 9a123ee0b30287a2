"""Reach every remote model endpoint once before a run starts, and fail in one line if one cannot serve.

Why: an unreachable endpoint used to surface only at the first model call, after the run folder
was written, as five retry lines and a 134-line traceback that never named the URL; a model name
the server does not serve surfaced the same way. One `GET {base_url}/models` per distinct endpoint
(a few seconds at most) answers both before anything is written or paid.

What is skipped: clients whose local server the harness starts itself (`server` set), clients
without an OpenAI-compatible endpoint (in-process or Voyage embedders), and endpoints under the
reserved `.invalid` domain (RFC 2606), which configs use for models that are never called
(conf/llm/imported.yaml, conf/judge/published.yaml).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from .errors import ConfigError

OPENAI_DEFAULT = "https://api.openai.com/v1"
TIMEOUT_S = 5.0
SHOWN_MODELS = 5  # how many served model names an error lists
SWITCH = "MEMEVAL_PREFLIGHT"  # =off: skip the check (a rerun whose every call is cached, offline)


class EndpointError(ConfigError):
    """A configured endpoint cannot serve the run: unreachable, refusing the key, or not serving
    the configured model. Printed as one line (exit 2) by `memeval run`, like every ConfigError."""


@dataclass(frozen=True)
class Endpoint:
    """One model a run will call: who it is (`role`, `key` in the config) and where it is served."""

    role: str  # "answering model", "indexing model", "judge", "embedder"
    key: str  # the config group: llm, llm_index, judge, embedder
    base_url: str
    model: str
    api_key_env: str | None
    default_url: bool = False  # base_url was not set: the OpenAI SDK's default


@dataclass(frozen=True)
class Reply:
    """What `GET {base_url}/models` gave: a status and the served model names (None: no listing)."""

    status: int
    models: list[str] | None = None
    lists_any_name: bool = False  # llama.cpp lists its one model but answers under any name


def endpoint_of(role: str, key: str, client: Any) -> Endpoint | None:
    """The remote OpenAI-compatible endpoint `client` will call, or None when there is none to check."""
    if getattr(client, "server", None) is not None or not hasattr(client, "base_url"):
        return None  # a local server the harness starts, or an in-process/Voyage client
    url = client.base_url
    default = not url
    if default:
        url = os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT
    host = urlparse(str(url)).hostname or ""
    if host.endswith(".invalid"):  # a model that is never called (imported answers, published verdicts)
        return None
    return Endpoint(role, key, str(url).rstrip("/"), str(client.model), getattr(client, "api_key_env", None), default)


def list_models(base_url: str, api_key: str | None, timeout_s: float = TIMEOUT_S) -> Reply:
    """GET {base_url}/models; raises httpx's transport errors when the endpoint cannot be reached."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    resp = httpx.get(f"{base_url}/models", headers=headers, timeout=timeout_s, follow_redirects=True)
    if resp.status_code != 200:
        return Reply(resp.status_code)
    try:
        data = resp.json().get("data")
        rows = [row for row in data if isinstance(row, dict) and "id" in row]
    except (ValueError, AttributeError, TypeError):
        return Reply(200)  # not a model listing: the server is up, the names cannot be checked
    if not rows:
        return Reply(200)
    any_name = all(str(row.get("owned_by", "")).lower() == "llamacpp" for row in rows)
    return Reply(200, [str(row["id"]) for row in rows], any_name)


def _why_unreachable(exc: Exception, timeout_s: float) -> str:
    """The transport error as a few words a user can act on."""
    import httpx

    text = str(exc).lower()
    if isinstance(exc, httpx.TimeoutException):
        return f"no answer within {timeout_s:g} s"
    if "refused" in text or "all connection attempts failed" in text:
        return "connection refused"
    if "name or service not known" in text or "name resolution" in text or "nodename" in text:
        return "host name not found"
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return first[:120]


def _roles(group: list[Endpoint]) -> str:
    names = list(dict.fromkeys(e.role for e in group))
    return names[0] + "'s" if len(names) == 1 else ", ".join(n + "'s" for n in names[:-1]) + " and " + names[-1] + "'s"


def _keys(group: list[Endpoint], field: str) -> str:
    keys = list(dict.fromkeys(f"{e.key}.{field}" for e in group))
    return keys[0] if len(keys) == 1 else ", ".join(keys[:-1]) + " and " + keys[-1]


def _check_one(url: str, group: list[Endpoint], get: Callable[..., Reply], timeout_s: float) -> str | None:
    """The problem with one endpoint as a sentence, or None when it can serve every model asked of it."""
    env = next((e.api_key_env for e in group if e.api_key_env), None)
    key = os.environ.get(env) if env else None
    try:
        reply = get(url, key, timeout_s)
    except Exception as exc:  # a transport error of any kind: the endpoint is not reachable
        fix = "check the network or set " + _keys(group, "base_url") if group[0].default_url \
            else "start the server or fix " + _keys(group, "base_url")
        return (f"cannot reach the {_roles(group)} endpoint {url} ({_why_unreachable(exc, timeout_s)}): {fix} "
                f"(a rerun answered wholly from the cache needs no server: {SWITCH}=off)")
    if reply.status in (401, 403):
        fix = f"check the key in {env}" if env else \
            f"set {_keys(group, 'api_key_env')} to the name of the variable holding the server's key"
        return f"the {_roles(group)} endpoint {url} refused the request (HTTP {reply.status}): {fix}"
    if reply.status >= 500:
        return (f"the {_roles(group)} endpoint {url} answered HTTP {reply.status} to GET /models: wait until the "
                f"server is ready or fix {_keys(group, 'base_url')}")
    if reply.models is None or reply.lists_any_name:
        return None  # no listing (404 and the like) or a server that answers under any name
    missing = [e for e in group if e.model not in reply.models]
    if not missing:
        return None
    served = ", ".join(reply.models[:SHOWN_MODELS]) + (", ..." if len(reply.models) > SHOWN_MODELS else "")
    asked = ", ".join(dict.fromkeys(e.model for e in missing))
    return (f"the {_roles(missing)} endpoint {url} does not serve {asked} (it serves: {served}): "
            f"fix {_keys(missing, 'model')}")


def preflight(endpoints: list[Endpoint], get: Callable[..., Reply] = list_models,
              timeout_s: float = TIMEOUT_S) -> None:
    """One request per distinct endpoint; raise EndpointError naming every endpoint that cannot serve."""
    if os.environ.get(SWITCH, "on").strip().lower() in ("off", "0", "false", "no"):
        return
    by_url: dict[str, list[Endpoint]] = {}
    for e in endpoints:
        by_url.setdefault(e.base_url, []).append(e)
    problems = [p for url, group in by_url.items() if (p := _check_one(url, group, get, timeout_s))]
    if problems:
        raise EndpointError("; ".join(problems))
