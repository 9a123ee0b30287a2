"""Retries with exponential backoff for transient endpoint failures (429, 5xx, timeouts, dropped
connections, a reply cut short into invalid JSON); a 429's Retry-After is honoured."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import openai

from .errors import ConfigError, ModelCallError, StreamCutShort

log = logging.getLogger(__name__)
T = TypeVar("T")

TRANSIENT = (
    openai.RateLimitError,
    openai.APITimeoutError,
    openai.APIConnectionError,
    openai.InternalServerError,
    openai.APIResponseValidationError,
    json.JSONDecodeError,  # a 200 reply whose body is cut short: nothing usable came back
    StreamCutShort,  # the same for a streamed reply
)


def _is_transient(exc: BaseException) -> bool:
    if isinstance(exc, TRANSIENT):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


def retry_after_s(exc: BaseException) -> float | None:
    """Seconds the endpoint asked us to wait (retry-after-ms, or Retry-After in seconds or as a
    date), or None when it did not say."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            return float(value)
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    what: str,
    max_attempts: int = 6,
    base_s: float = 1.0,
    max_s: float = 30.0,
    max_retry_after_s: float = 120.0,
) -> T:
    """Run `call`, retrying transient failures; authentication errors fail at once with a fix."""
    for attempt in range(1, max_attempts + 1):
        try:
            return await call()
        except openai.AuthenticationError as exc:
            raise ConfigError(
                f"{what}: the endpoint rejected the API key ({exc.__class__.__name__}). "
                "Check the key in the environment variable named by the config's api_key_env."
            ) from exc
        except Exception as exc:  # noqa: BLE001 - classified below
            if not _is_transient(exc) or attempt == max_attempts:
                raise ModelCallError(
                    f"{what}: failed after {attempt} attempt(s): {exc.__class__.__name__}: {exc}"
                ) from exc
            delay = min(max_s, base_s * 2 ** (attempt - 1)) * (0.5 + random.random() / 2)
            asked = retry_after_s(exc)
            if asked is not None:  # the endpoint knows its own limits better than our backoff
                delay = min(max(asked, 0.0), max_retry_after_s)
            log.warning("%s: %s (attempt %d/%d), retrying in %.1fs", what, exc.__class__.__name__,
                        attempt, max_attempts, delay)
            await asyncio.sleep(delay)
    raise AssertionError("unreachable")
