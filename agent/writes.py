"""The agent's writes to the backend: each carries an idempotency key and is retried, within a
bound, while the backend or its database is away, so it is stored exactly once.

A write whose answer was lost (the connection dropped, a 503 STORE_UNAVAILABLE while Postgres
restarts, a timeout) may or may not have been stored: sent again with the same
`Idempotency-Key`, the backend stores it once and answers with the row it already has.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from tenacity import AsyncRetrying, retry_if_exception, stop_after_delay, wait_exponential

from agent.backend_client import BackendClient, BackendError
from agent.context import Context

HEADER = "Idempotency-Key"
WAIT_S = 30.0  # how long a write waits for a backend (or database) that is restarting
FIRST_WAIT_S = 0.2  # then twice as long each time, up to 2 s
RETRIED = frozenset({502, 503, 504})  # unreachable, answer lost, STORE_UNAVAILABLE, timeout


def retryable(exc: BaseException) -> bool:
    return isinstance(exc, BackendError) and exc.status in RETRIED


def new_key() -> str:
    return uuid.uuid4().hex


async def send(
    client: BackendClient,
    context: Context,
    method: str,
    path: str,
    *,
    json: Any = None,
    key: str | None = None,
    wait_s: float = WAIT_S,
    timeout: float | None = None,
) -> Any:
    """Send one write with its idempotency key, again while the backend is away (up to
    `wait_s`); the last BackendError when it stays away or refuses the write."""
    headers = {HEADER: key or new_key()}
    started = time.monotonic()
    try:  # most writes land at once: the retry policy is built only for one that did not
        return await client.call(context, method, path, json=json, headers=headers, timeout=timeout)
    except BackendError as exc:
        if not retryable(exc) or wait_s <= FIRST_WAIT_S:
            raise
    await asyncio.sleep(FIRST_WAIT_S)
    retrying = AsyncRetrying(
        stop=stop_after_delay(max(0.0, wait_s - (time.monotonic() - started))),
        wait=wait_exponential(multiplier=FIRST_WAIT_S * 2, max=2),
        retry=retry_if_exception(retryable),
        reraise=True,
    )
    async for attempt in retrying:
        with attempt:
            return await client.call(
                context, method, path, json=json, headers=headers, timeout=timeout
            )
    raise AssertionError("unreachable")  # pragma: no cover (tenacity re-raises)
