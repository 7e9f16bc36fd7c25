"""Superset as the person (`SUPERSET__IDENTITY=person`): which credentials a Superset request
carries. The acting person is set once per request by the RBAC dependency (`acting_as`); sync
and other work of the platform's own runs `as_service()`. In person mode a request with
neither is refused (`SUPERSET_LOGIN_REQUIRED`): it never falls back to the service account.

A person's client logs in with their refresh token (sealed in `superset_sessions`, opened only
here) through `POST /api/v1/security/refresh`; what Superset hides from them (403 by UUID,
404 by id, a redirect to its login page) is `NotFound` to every caller.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import OrderedDict
from typing import Any

import httpx

from backend.acting import Person as Person
from backend.acting import acting_as as acting_as
from backend.acting import as_service as as_service
from backend.acting import current as current
from backend.acting import is_service as is_service
from backend.codes import Code
from backend.config import Settings, SupersetInstanceSettings
from backend.db import utcnow
from backend.errors import Forbidden, NotFound
from backend.superset.client import SupersetClient
from backend.superset.models import SupersetSession
from common.sealed import SealError, unseal

PERSON_TOKEN_TTL_S = 60.0  # the session row is read again (forgotten? expired?) every minute
MAX_CLIENTS = 256


class LoginRequired(Forbidden):
    """No Superset session of this person for the environment a read needs."""

    code = Code.SUPERSET_LOGIN_REQUIRED


def login_required(environment: str) -> LoginRequired:
    return LoginRequired(
        f"Connect your {environment} Superset account first (POST /api/superset/session)",
        details={"environment": environment},
    )


def person_mode(settings: Settings) -> bool:
    return settings.superset.enabled and settings.superset.identity == "person"


class PersonClient(SupersetClient):
    """One person's client of one environment's Superset."""

    def __init__(
        self,
        environment: str,
        instance: SupersetInstanceSettings,
        timeout: float,
        person: Person,
    ) -> None:
        super().__init__(environment, instance, timeout)
        self.person = person

    async def _session_row(self) -> SupersetSession | None:
        async with self.person.factory() as session:
            row = await session.get(SupersetSession, (self.person.user_id, self.environment))
        if row is None or row.expires_at <= utcnow():
            return None
        return row

    async def _login(self) -> None:
        async with self._lock:
            if self._token and time.monotonic() - self._token_at < PERSON_TOKEN_TTL_S:
                return
            self._token = ""
            row = await self._session_row()
            if row is None:
                raise login_required(self.environment)
            try:
                refresh = unseal(self.person.settings.mcp_key, row.refresh_sealed)["refresh"]
            except (SealError, KeyError) as exc:
                raise login_required(self.environment) from exc
            try:
                response = await self._send(
                    "POST",
                    "/api/v1/security/refresh",
                    headers={"Authorization": f"Bearer {refresh}"},
                )
                if response.status_code in (401, 422):  # revoked, expired, the user removed
                    raise login_required(self.environment)
                response.raise_for_status()
                token = str(response.json()["access_token"])
                csrf = await self._send(
                    "GET",
                    "/api/v1/security/csrf_token/",
                    headers={"Authorization": f"Bearer {token}"},
                )
                self._csrf = str(csrf.json().get("result") or "") if csrf.is_success else ""
            except (httpx.HTTPError, ValueError, KeyError) as exc:
                raise self._unavailable(exc) from exc
            self._token, self._token_at = token, time.monotonic()

    async def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = await super().request(method, path, **kwargs)
        if response.status_code == 401:  # refreshed and still refused: the session is gone
            self._token = ""
            raise login_required(self.environment)
        return response

    async def json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        """What Superset hides from this person (403, or a redirect to its login page) is
        `NotFound`, as Superset's own 404 is."""
        response = await self.request(method, path, **kwargs)
        if response.status_code == 403 or response.is_redirect:
            raise NotFound(f"Not found in the {self.environment} Superset: {path}")
        return await super()._answer(response, path)


def forbidden(environment: str, message: str) -> Forbidden:
    return Forbidden(
        f"Your {environment} Superset account may not do this: {message}",
        code=Code.SUPERSET_FORBIDDEN,
        details={"environment": environment},
    )


_clients: OrderedDict[tuple[int, uuid.UUID, str], PersonClient] = OrderedDict()


def client_for(settings: Settings, environment: str, person: Person) -> PersonClient:
    instance = settings.superset.instance(environment)
    if instance is None:
        raise NotFound(f"No Superset is configured for {environment}")
    key = (id(settings), person.user_id, environment)
    found = _clients.get(key)
    if found is None:
        found = PersonClient(environment, instance, settings.superset.timeout_s, person)
        _clients[key] = found
        while len(_clients) > MAX_CLIENTS:
            _, old = _clients.popitem(last=False)
            _closing.add(asyncio.ensure_future(old.aclose()))
    else:
        _clients.move_to_end(key)
    return found


_closing: set[asyncio.Future[None]] = set()


async def drop(user_id: uuid.UUID) -> None:
    """Forget a person's clients (their sessions were forgotten or replaced)."""
    for key in [k for k in _clients if k[1] == user_id]:
        await _clients.pop(key).aclose()


async def close_all() -> None:
    clients = list(_clients.values())
    _clients.clear()
    for one in clients:
        await one.aclose()
