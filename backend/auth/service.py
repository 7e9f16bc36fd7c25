"""Login, service tokens and user administration."""

from __future__ import annotations

import uuid
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.auth import external
from backend.auth.identity import ExternalIdentity
from backend.auth.ldap import LdapDirectory
from backend.auth.passwords import Refused, Verdict, password_sources
from backend.auth.schemas import (
    LoginResponse,
    TokenResponse,
    UserCreate,
    UserRead,
    UserSource,
)
from backend.codes import Code
from backend.config import Settings
from backend.db import utcnow
from backend.errors import Conflict, Unauthorized
from backend.identity import tokens
from backend.identity.models import ServiceClient, User
from backend.principal import Principal

_BAD_LOGIN = "Invalid username or password"


class DirectorySignIn(Protocol):
    """Called after a directory person's password was accepted, with the same credentials
    (Superset as the person opens their Superset sessions); it must never store the password."""

    async def __call__(
        self,
        *,
        session: AsyncSession,
        settings: Settings,
        user_id: uuid.UUID,
        username: str,
        password: str,
    ) -> None: ...


_at_directory_sign_in: list[DirectorySignIn] = []


def on_directory_sign_in(hook: DirectorySignIn) -> None:
    """Install a hook (once: building a second app installs nothing twice); backend/main.py."""
    if hook not in _at_directory_sign_in:
        _at_directory_sign_in.append(hook)


async def login(
    *,
    session: AsyncSession,
    settings: Settings,
    directory: LdapDirectory | None,
    username: str,
    password: str,
    request_id: str | None,
) -> LoginResponse:
    """Check the password with the local accounts, then the directory; audit success and
    failure alike, with the source; one message for every refusal."""
    verdict: Verdict = None
    for source in password_sources(directory):
        verdict = await source.authenticate(session=session, username=username, password=password)
        if verdict is not None:
            break
    if isinstance(verdict, ExternalIdentity):
        user = await external.sign_in(
            session=session, settings=settings, identity=verdict, request_id=request_id
        )
        if verdict.source == "ldap":  # person mode: their Superset sessions, same credentials
            for hook in _at_directory_sign_in:
                await hook(
                    session=session,
                    settings=settings,
                    user_id=user.id,
                    username=username,
                    password=password,
                )
        return issue_login(settings, user)
    if not isinstance(verdict, User):
        refused = verdict if isinstance(verdict, Refused) else Refused("local")
        external.audit_failure(
            session=session,
            source=refused.source,
            username=username,
            reason="invalid_credentials",
            request_id=request_id,
            user=refused.user,
        )
        await session.commit()
        raise Unauthorized(_BAD_LOGIN, code=Code.INVALID_CREDENTIALS)
    actor = Principal(verdict.id, verdict.username, list(verdict.roles), None, request_id)
    verdict.last_sign_in_at = utcnow()
    audit.record(
        session=session,
        actor=actor,
        action="auth.login",
        resource_type="user",
        resource_id=str(verdict.id),
        details={"source": "local"},
    )
    await session.commit()
    return issue_login(settings, verdict)


def issue_login(settings: Settings, user: User) -> LoginResponse:
    """The answer of every sign-in: a user JWT and who it is for."""
    token, ttl = tokens.issue(settings, sub=str(user.id), roles=list(user.roles), typ="user")
    return LoginResponse(access_token=token, expires_in=ttl, user=UserRead.model_validate(user))


async def source_of(*, session: AsyncSession, user_id: uuid.UUID) -> UserSource:
    """Where the account comes from: "local", "ldap" or "oidc"."""
    source = await session.scalar(select(User.source).where(User.id == user_id))
    return "ldap" if source == "ldap" else "oidc" if source == "oidc" else "local"


async def list_users(*, session: AsyncSession) -> list[User]:
    """Every account, oldest first (admin)."""
    return list(await session.scalars(select(User).order_by(User.created_at, User.username)))


async def service_token(
    *,
    session: AsyncSession,
    settings: Settings,
    client_id: str,
    client_secret: str,
    request_id: str | None,
) -> TokenResponse:
    client = await session.scalar(select(ServiceClient).where(ServiceClient.client_id == client_id))
    await session.commit()  # as in login: no pooled connection held during the check
    ok = await tokens.verify_secret(client.secret_hash if client else None, client_secret)
    outcome = "success" if client is not None and ok and client.is_active else "failure"
    audit.record(
        session=session,
        actor=None,
        action="auth.service_token",
        resource_type="service_client",
        resource_id=client_id[:64],
        outcome=outcome,
        request_id=request_id,
    )
    await session.commit()
    if outcome == "failure":
        raise Unauthorized("Invalid client credentials", code=Code.INVALID_CREDENTIALS)
    token, ttl = tokens.issue(settings, sub=client_id, roles=["service"], typ="service")
    return TokenResponse(access_token=token, expires_in=ttl)


async def create_user(*, session: AsyncSession, actor: Principal, data: UserCreate) -> User:
    user = User(
        username=data.username,
        password_hash=await tokens.hash_secret(data.password),
        roles=sorted({r.value for r in data.roles}),
    )
    session.add(user)
    try:
        await session.flush()
    except IntegrityError as exc:
        await session.rollback()
        raise Conflict(f"Username {data.username!r} is taken", code=Code.USERNAME_TAKEN) from exc
    audit.record(
        session=session,
        actor=actor,
        action="user.create",
        resource_type="user",
        resource_id=str(user.id),
        details={"username": user.username, "roles": user.roles},
    )
    await session.commit()
    return user


async def upsert_user(
    *, session: AsyncSession, username: str, password: str, roles: list[str]
) -> User:
    """Seed helper: create the user or reset its password and roles (idempotent). Only a local
    account is reset: a directory or provider account of that name is never given a password."""
    user = await session.scalar(
        select(User).where(User.username == username, User.source == "local")
    )
    if user is None:
        user = User(username=username, password_hash="", roles=roles)
        session.add(user)
    if not await tokens.verify_secret(user.password_hash or None, password):
        user.password_hash = await tokens.hash_secret(password)
    user.roles, user.is_active = roles, True
    return user


async def upsert_service_client(*, session: AsyncSession, client_id: str, secret: str) -> None:
    client = await session.scalar(select(ServiceClient).where(ServiceClient.client_id == client_id))
    if client is None:
        client = ServiceClient(client_id=client_id, secret_hash="", description="The agent service")
        session.add(client)
    if not await tokens.verify_secret(client.secret_hash or None, secret):
        client.secret_hash = await tokens.hash_secret(secret)
    client.is_active = True
