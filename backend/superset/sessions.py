"""A person's Superset sessions: opened with their credentials (at a directory sign-in, or by
hand), kept as Superset's refresh token sealed with the environment's key, forgotten on
request or at sign-out. The password is sent to Superset once and kept nowhere.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import timedelta
from typing import Literal

import httpx
from pydantic import BaseModel, Field
from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from backend.codes import Code
from backend.config import Settings
from backend.db import utcnow
from backend.errors import NotFound, Unauthorized
from backend.superset import person, visibility
from backend.superset.client import SupersetUnavailable
from backend.superset.models import SupersetSession
from common.sealed import seal

log = logging.getLogger("backend.superset")

ENVIRONMENTS = ("staging", "production")
Provider = Literal["db", "ldap"]


class SessionState(BaseModel):
    connected: bool
    username: str | None = None


class SessionsRead(BaseModel):
    environments: dict[str, SessionState]


class SessionCreate(BaseModel):
    environment: Literal["staging", "production"]
    username: str = Field(max_length=255)
    password: str = Field(max_length=1024)
    provider: Provider | None = None


def default_provider(settings: Settings) -> Provider:
    return "ldap" if settings.ldap.url else "db"


async def _superset_login(
    settings: Settings, environment: str, username: str, password: str, provider: Provider
) -> str | None:
    """Superset's refresh token for these credentials; None when Superset refuses them."""
    instance = settings.superset.instance(environment)
    if instance is None:
        raise NotFound(f"No Superset is configured for {environment}")
    if not username or not password:
        return None
    body = {"username": username, "password": password, "provider": provider, "refresh": True}
    try:
        async with httpx.AsyncClient(
            base_url=instance.url.rstrip("/"),
            timeout=settings.superset.timeout_s,
            headers={"Accept": "application/json"},
        ) as http:
            response = await http.post("/api/v1/security/login", json=body)
    except httpx.HTTPError as exc:
        log.warning("superset %s unreachable: %s", environment, type(exc).__name__)
        raise SupersetUnavailable(
            f"The {environment} Superset is unavailable", details={"environment": environment}
        ) from exc
    if response.status_code != 200:
        return None
    try:
        return str(response.json()["refresh_token"])
    except (ValueError, KeyError):
        return None


async def _store(
    session: AsyncSession,
    settings: Settings,
    user_id: uuid.UUID,
    environment: str,
    username: str,
    provider: str,
    refresh: str,
) -> None:
    now = utcnow()
    values = {
        "user_id": user_id,
        "environment": environment,
        "username": username,
        "provider": provider,
        "refresh_sealed": seal(settings.mcp_key, {"refresh": refresh}),
        "signed_in_at": now,
        "expires_at": now + timedelta(seconds=settings.superset.session_max_age_s),
    }
    stmt = insert(SupersetSession).values(**values)
    await session.execute(
        stmt.on_conflict_do_update(
            index_elements=["user_id", "environment"],
            set_={k: stmt.excluded[k] for k in values if k not in ("user_id", "environment")},
        )
    )


async def connect(
    *, session: AsyncSession, settings: Settings, user_id: uuid.UUID, data: SessionCreate
) -> SessionsRead:
    """One environment connected by hand; wrong or empty credentials are 401, nothing kept."""
    provider = data.provider or default_provider(settings)
    refresh = await _superset_login(
        settings, data.environment, data.username, data.password, provider
    )
    if refresh is None:
        raise Unauthorized(
            f"The {data.environment} Superset refused these credentials",
            code=Code.INVALID_CREDENTIALS,
            details={"environment": data.environment},
        )
    await _store(session, settings, user_id, data.environment, data.username, provider, refresh)
    await session.commit()
    await _reset(user_id)
    return await status(session=session, settings=settings, user_id=user_id)


async def open_at_sign_in(
    *, session: AsyncSession, settings: Settings, user_id: uuid.UUID, username: str, password: str
) -> None:
    """At a directory sign-in in person mode: a fresh Superset session in each environment with
    the same credentials (`provider: "ldap"`); one Superset refusing leaves that one closed."""
    if not person.person_mode(settings):
        return
    envs = [e for e in ENVIRONMENTS if settings.superset.instance(e) is not None]

    async def one(environment: str) -> str | None:
        try:
            return await _superset_login(settings, environment, username, password, "ldap")
        except SupersetUnavailable:
            return None

    tokens = await asyncio.gather(*(one(e) for e in envs))
    await session.execute(delete(SupersetSession).where(SupersetSession.user_id == user_id))
    for environment, refresh in zip(envs, tokens, strict=True):
        if refresh is not None:
            await _store(session, settings, user_id, environment, username, "ldap", refresh)
        else:
            log.warning("superset %s refused a directory sign-in's session", environment)
    await session.commit()
    await _reset(user_id)


async def _reset(user_id: uuid.UUID) -> None:
    """The person's cached clients and visible dashboards follow their new sessions."""
    await person.drop(user_id)
    visibility.forget(user_id)


async def forget(*, session: AsyncSession, user_id: uuid.UUID) -> None:
    await session.execute(delete(SupersetSession).where(SupersetSession.user_id == user_id))
    await session.commit()
    await _reset(user_id)


async def status(*, session: AsyncSession, settings: Settings, user_id: uuid.UUID) -> SessionsRead:
    rows = {
        row.environment: row
        for row in await session.scalars(
            select(SupersetSession).where(
                SupersetSession.user_id == user_id, SupersetSession.expires_at > utcnow()
            )
        )
    }
    return SessionsRead(
        environments={
            env: SessionState(
                connected=env in rows, username=rows[env].username if env in rows else None
            )
            for env in ENVIRONMENTS
            if settings.superset.instance(env) is not None
        }
    )
