"""Retries with exponential backoff for transient endpoint failures (429, 5xx, timeouts)."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

import openai

from .errors import ConfigError, ModelCallError

log = logging.getLogger(__name__)
T = TypeVar("T")

TRANSIENT = (
    openai.RateLimitError,
    openai.APITimeoutError,
    openai.APIConnectionError,
    openai.InternalServerError,
)


def _is_transient(exc: BaseException) -> bool:
    if isinstance(exc, TRANSIENT):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    what: str,
    max_attempts: int = 6,
    base_s: float = 1.0,
    max_s: float = 30.0,
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
            log.warning("%s: %s (attempt %d/%d), retrying in %.1fs", what, exc.__class__.__name__,
                        attempt, max_attempts, delay)
            await asyncio.sleep(delay)
    raise AssertionError("unreachable")
