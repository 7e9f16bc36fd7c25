"""One Superset instance over its REST API: login as the service account, JSON always, CSRF
for writes. The password is read from settings when logging in and kept nowhere else.

Clients are created lazily, one per environment and settings object, and closed by
`close_all()` (the app's lifespan); none is created at import time.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import httpx

from backend.codes import Code
from backend.config import Settings, SupersetInstanceSettings
from backend.errors import AppError, NotFound, ServiceUnavailable

log = logging.getLogger("backend.superset")

TOKEN_TTL_S = 600.0  # Superset's access tokens live 15 minutes: log in again well before
MAX_MESSAGE_CHARS = 500
# Superset runs under gunicorn, whose keep-alive is 2 s by default: a connection idle longer is
# closed by the server, so the pool drops it first. One the server closes just as it is reused
# fails with no answer (a read or protocol error): a request that changes nothing is sent once
# more on a fresh connection (CI saw a health check 503 from exactly that).
KEEPALIVE_EXPIRY_S = 1.5
STALE = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)
# they change nothing in Superset (a login or refresh only issues a token)
SAFE_POSTS = frozenset({"/api/v1/chart/data", "/api/v1/security/login", "/api/v1/security/refresh"})


def _safe(method: str, path: str) -> bool:
    return method.upper() in ("GET", "HEAD", "OPTIONS") or path in SAFE_POSTS


class SupersetUnavailable(ServiceUnavailable):
    """The Superset instance did not answer, or answered something other than its API."""

    code = Code.SUPERSET_UNAVAILABLE


class SupersetError(AppError):
    """Superset answered an API error; `message` is Superset's own, bounded."""

    status_code = 502
    code = Code.SUPERSET_ERROR


def superset_message(response: httpx.Response) -> str:
    """Superset's own error message from a JSON answer, bounded; never a stack trace."""
    try:
        body = response.json()
    except ValueError:
        return f"Superset answered HTTP {response.status_code}"
    message: Any = body.get("message") if isinstance(body, dict) else None
    if message is None and isinstance(body, dict) and body.get("errors"):
        message = body["errors"][0].get("message")
    if isinstance(message, dict):  # field errors: {"field": ["..."]}
        message = "; ".join(f"{k}: {v}" for k, v in message.items())
    text = str(message or f"Superset answered HTTP {response.status_code}")
    return text[:MAX_MESSAGE_CHARS]


class SupersetClient:
    """An authenticated JSON client of one environment's Superset."""

    def __init__(self, environment: str, instance: SupersetInstanceSettings, timeout: float):
        self.environment = environment
        self.url = instance.url.rstrip("/")
        self._instance = instance
        self._http = httpx.AsyncClient(
            base_url=self.url,
            timeout=timeout,
            headers={"Accept": "application/json"},
            limits=httpx.Limits(keepalive_expiry=KEEPALIVE_EXPIRY_S),
        )
        self._token = ""
        self._csrf = ""
        self._token_at = 0.0
        self._lock = asyncio.Lock()

    async def aclose(self) -> None:
        await self._http.aclose()

    def _unavailable(self, exc: Exception | None = None) -> SupersetUnavailable:
        if exc is not None:
            log.warning("superset %s unreachable: %s", self.environment, type(exc).__name__)
        return SupersetUnavailable(
            f"The {self.environment} Superset is unavailable",
            details={"environment": self.environment},
        )

    async def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request; sent once more when a kept connection failed it unanswered and it
        changes nothing (see STALE); SupersetUnavailable when no answer came."""
        try:
            return await self._http.request(method, path, **kwargs)
        except STALE as exc:
            if not _safe(method, path):
                raise self._unavailable(exc) from exc
            log.info("superset %s: %s on a kept connection, sent again", self.environment,
                     type(exc).__name__)  # fmt: skip
        except httpx.HTTPError as exc:
            raise self._unavailable(exc) from exc
        try:
            return await self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise self._unavailable(exc) from exc

    async def _login(self) -> None:
        async with self._lock:
            if self._token and time.monotonic() - self._token_at < TOKEN_TTL_S:
                return
            body = {
                "username": self._instance.username,
                "password": self._instance.password.get_secret_value(),
                "provider": self._instance.provider,
                "refresh": False,
            }
            try:
                response = await self._send("POST", "/api/v1/security/login", json=body)
                if response.status_code != 200:
                    log.warning(
                        "superset %s refused the service account's login (HTTP %s)",
                        self.environment,
                        response.status_code,
                    )
                    raise self._unavailable()
                token = str(response.json()["access_token"])
                csrf = await self._send(
                    "GET",
                    "/api/v1/security/csrf_token/",
                    headers={"Authorization": f"Bearer {token}"},
                )
                csrf.raise_for_status()
                self._csrf = str(csrf.json()["result"])
            except (httpx.HTTPError, ValueError, KeyError) as exc:
                raise self._unavailable(exc) from exc
            self._token, self._token_at = token, time.monotonic()

    async def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """Send one request with the service account's token (and CSRF for writes)."""
        await self._login()
        headers = {"Authorization": f"Bearer {self._token}", "Referer": self.url}
        if method.upper() != "GET":
            headers["X-CSRFToken"] = self._csrf  # its session cookie is in the client's jar
        response = await self._send(method, path, headers=headers, **kwargs)
        if response.status_code == 401:  # the token expired early: once more, logged in again
            self._token = ""
            await self._login()
            headers["Authorization"] = f"Bearer {self._token}"
            headers["X-CSRFToken"] = self._csrf
            response = await self._send(method, path, headers=headers, **kwargs)
        if response.status_code in (502, 503, 504):
            raise self._unavailable()
        return response

    async def json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        """A JSON answer; 404 is NotFound, other errors are SupersetError with its message."""
        return await self._answer(await self.request(method, path, **kwargs), path)

    async def _answer(self, response: httpx.Response, path: str) -> dict[str, Any]:
        if response.status_code == 404:
            raise NotFound(f"Not found in the {self.environment} Superset: {path}")
        if response.is_error:
            raise SupersetError(superset_message(response), details={"path": path})
        try:
            return dict(response.json())
        except ValueError as exc:
            raise self._unavailable(exc) from exc

    async def content(self, path: str, **kwargs: Any) -> bytes:
        response = await self.request("GET", path, **kwargs)
        if response.is_error:
            raise SupersetError(superset_message(response), details={"path": path})
        return response.content


_clients: dict[tuple[int, str], SupersetClient] = {}


def client(settings: Settings, environment: str) -> SupersetClient:
    """The environment's client for whoever acts: the service account, or in person mode the
    acting person's own session (backend/superset/person.py; `SUPERSET_LOGIN_REQUIRED` when
    nobody acts). NotFound when that environment has no Superset configured."""
    from backend.superset import person  # it builds on this module's client

    if person.person_mode(settings) and not person.is_service():
        acting = person.current()
        if acting is None:
            raise person.login_required(environment)
        return person.client_for(settings, environment, acting)
    return service_client(settings, environment)


def service_client(settings: Settings, environment: str) -> SupersetClient:
    """The service account's client of the environment, whatever the mode."""
    instance = settings.superset.instance(environment)
    if instance is None:
        raise NotFound(f"No Superset is configured for {environment}")
    key = (id(settings), environment)
    found = _clients.get(key)
    if found is None:
        found = _clients[key] = SupersetClient(environment, instance, settings.superset.timeout_s)
    return found


async def close_all() -> None:
    from backend.superset import person

    await person.close_all()
    clients = list(_clients.values())
    _clients.clear()
    for one in clients:
        await one.aclose()
