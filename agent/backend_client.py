"""The agent's one HTTP client to the backend: dual identity on every call, one error type."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from agent.config import Settings
from agent.context import Context
from agent.errors import BackendError, BackendUnreachable, Code, aiohttp_error

READ_RETRY_WAIT_S = 0.2  # a read that found no connection is sent again after this, then 0.4


def _error_from(response: httpx.Response) -> BackendError:
    try:
        error = response.json()["error"]
        return BackendError(
            response.status_code, str(error["code"]), str(error["message"]), error.get("details")
        )
    except (ValueError, KeyError, TypeError):
        return BackendError(response.status_code, Code.BACKEND_ERROR, "Backend request failed")


class BackendClient:
    """Calls the backend as the agent service on behalf of the user in the run context."""

    def __init__(self, settings: Settings, http: httpx.AsyncClient | None = None) -> None:
        self._settings = settings
        self._http = http or httpx.AsyncClient(
            base_url=settings.backend_url,
            timeout=httpx.Timeout(30.0, connect=5.0),
            # httpx's API over aiohttp's connections (httpx-aiohttp): aiohttp parses HTTP in
            # C, where httpcore runs h11 and an anyio cancel scope per read and write; a
            # backend call costs the agent about a third of the CPU (docs/architecture.md,
            # "Per-turn cost"). Up to 64 connections, all kept alive; an idle one is dropped
            # before uvicorn's 5 s keep-alive timeout closes it from the other end, so a
            # write never goes out on a connection being closed.
            transport=AiohttpTransport(
                limits=httpx.Limits(
                    max_connections=64, max_keepalive_connections=64, keepalive_expiry=4.0
                )
            ),
        )
        self._service_token: str | None = None
        self._service_token_expiry = 0.0
        self._token_lock = asyncio.Lock()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def service_token(self) -> str:
        """A cached service JWT, renewed 30 s before it expires."""
        if self._service_token and time.monotonic() < self._service_token_expiry - 30:
            return self._service_token
        async with self._token_lock:
            if self._service_token and time.monotonic() < self._service_token_expiry - 30:
                return self._service_token
            secret = self._settings.agent_client_secret
            response = await self._http.post(
                "/api/auth/service-token",
                json={
                    "client_id": self._settings.agent_client_id,
                    "client_secret": secret.get_secret_value() if secret else "",
                },
            )
            if response.status_code != 200:
                raise _error_from(response)
            body = response.json()
            self._service_token = str(body["access_token"])
            self._service_token_expiry = time.monotonic() + float(body["expires_in"])
            return self._service_token

    def current_service_token(self) -> str | None:
        """The cached service JWT, if any (so a debug record can be scrubbed of it)."""
        return self._service_token

    async def request(
        self,
        method: str,
        path: str,
        *,
        user_token: str,
        json: Any = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
        run_id: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """Send one request with the service JWT and X-On-Behalf-Of (and X-Run-Id when it is
        a tool call of a run); return the parsed JSON body.

        Connection failures are retried for reads only (GET), never for writes.
        """
        send = partial(
            self._send, method, path, user_token, json, params, timeout, run_id, headers or {}
        )
        response = await self._dispatch(send, method)
        if response.status_code == 401 and _error_from(response).details.get("credential") == (
            "service"
        ):
            # Our service token was refused (expired early, secret rotated): nothing ran, so
            # one resend with a fresh token is safe for writes too.
            self._service_token = None
            response = await self._dispatch(send, method)
        if not response.is_success:
            raise _error_from(response)
        return response.json() if response.content else None

    async def _dispatch(
        self, send: Callable[[], Awaitable[httpx.Response]], method: str
    ) -> httpx.Response:
        """Send once (reads: with retries on connection failures); transport errors mapped."""
        try:
            try:
                return await send()
            except UNANSWERED:
                if method.upper() != "GET":
                    raise
            # A read that found no connection: again, with the policy built only now.
            await asyncio.sleep(READ_RETRY_WAIT_S)
            return await _retrying()(send)
        except UNANSWERED as exc:
            raise _unanswered(exc) from exc

    async def _send(
        self,
        method: str,
        path: str,
        user_token: str,
        json: Any,
        params: dict[str, Any] | None,
        timeout: float | None,
        run_id: str | None,
        extra: dict[str, str],
    ) -> httpx.Response:
        headers = {
            **extra,
            "Authorization": f"Bearer {await self.service_token()}",
            "X-On-Behalf-Of": user_token,
        }
        if run_id is not None:
            headers["X-Run-Id"] = run_id
        return await self._http.request(
            method,
            path,
            json=json,
            params=_clean(params),
            headers=headers,
            timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
        )

    async def call(self, context: Context, method: str, path: str, **kwargs: Any) -> Any:
        """`request` on behalf of the user in `context` (within its run, if it has one)."""
        if context.channel is not None:
            kwargs["headers"] = {**kwargs.get("headers", {}), "X-Channel": context.channel}
        return await self.request(
            method, path, user_token=context.user_token, run_id=context.audit_run_id, **kwargs
        )


# What a request can end in without an answer: httpx's transport errors; and, from the aiohttp
# transport, a timeout or an aiohttp error it does not translate.
UNANSWERED = (httpx.TransportError, aiohttp.ClientError, TimeoutError)


def _unanswered(exc: BaseException) -> BackendError:
    """The BackendError of a request that got no answer (from the aiohttp error the
    transport wraps, when there is one: its own error is always a connect timeout)."""
    cause = aiohttp_error(exc) or exc
    if isinstance(cause, TimeoutError | httpx.TimeoutException):
        return BackendError(504, Code.BACKEND_TIMEOUT, "The backend did not answer in time")
    if isinstance(cause, aiohttp.ClientConnectorError | httpx.ConnectError):
        return BackendUnreachable()  # never sent
    # Sent, but the answer was lost (e.g. the backend restarted): it may have run.
    return BackendError(503, Code.BACKEND_UNAVAILABLE, "The backend is unreachable")


def _retrying() -> AsyncRetrying:
    """A retry policy for one read (its state is per call; writes skip it, they never retry)."""
    return AsyncRetrying(
        stop=stop_after_attempt(2),  # after the first try, made without it
        wait=wait_exponential(multiplier=READ_RETRY_WAIT_S * 2, max=2),
        retry=retry_if_exception_type(UNANSWERED),
        reraise=True,
    )


def _clean(params: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if params is None else {k: v for k, v in params.items() if v is not None}
