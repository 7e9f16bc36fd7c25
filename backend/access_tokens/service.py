"""Create, list, revoke and check personal access tokens; creation and revocation audited."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from backend.access_tokens.models import AccessToken
from backend.access_tokens.schemas import (
    AccessTokenCreate,
    AccessTokenCreated,
    AccessTokenPage,
    AccessTokenRead,
)
from backend.audit import service as audit
from backend.auth.models import User
from backend.auth.roles import highest_rank
from backend.db import utcnow
from backend.errors import NotFound, Unauthorized
from backend.principal import Principal

PREFIX = "acp_"
PREFIX_CHARS = len(PREFIX) + 8  # what lists show of a token: enough to tell tokens apart
# One message for a revoked, expired and unknown token alike: none of them confirms the others.
INVALID = "Invalid or expired access token"
# last_used_at is written at most this often per token: a script's burst costs one write.
TOUCH_EVERY = timedelta(minutes=1)
MAX_TOKENS_PER_USER = 100


def is_access_token(credential: str) -> bool:
    return credential.startswith(PREFIX)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def create(
    *, session: AsyncSession, actor: Principal, data: AccessTokenCreate
) -> AccessTokenCreated:
    """A new token for the actor; its secret is in this answer only."""
    token = PREFIX + secrets.token_urlsafe(32)
    row = AccessToken(
        user_id=actor.user_id,
        name=data.name,
        scope=data.scope,
        prefix=token[:PREFIX_CHARS],
        token_hash=digest(token),
        created_at=utcnow(),
        expires_at=utcnow() + timedelta(days=data.expires_in_days),
    )
    session.add(row)
    await session.flush()
    audit.record(
        session=session,
        actor=actor,
        action="access_token.create",
        resource_type="access_token",
        resource_id=str(row.id),
        details={"name": row.name, "scope": row.scope, "expires_at": row.expires_at.isoformat()},
    )
    await session.commit()
    return AccessTokenCreated(
        id=row.id,
        name=row.name,
        scope=data.scope,
        prefix=row.prefix,
        token=token,
        created_at=row.created_at,
        expires_at=row.expires_at,
    )


async def list_own(*, session: AsyncSession, actor: Principal) -> AccessTokenPage:
    """The actor's tokens not revoked, newest first (expired ones too, until revoked)."""
    rows = await session.scalars(
        select(AccessToken)
        .where(AccessToken.user_id == actor.user_id, AccessToken.revoked_at.is_(None))
        .order_by(AccessToken.created_at.desc())
        .limit(MAX_TOKENS_PER_USER)
    )
    return AccessTokenPage(items=[AccessTokenRead.model_validate(row) for row in rows])


async def revoke(*, session: AsyncSession, actor: Principal, token_id: uuid.UUID) -> None:
    """Revoke one of the actor's tokens; someone else's (or a revoked one) is NotFound."""
    row = await session.get(AccessToken, token_id)
    if row is None or row.user_id != actor.user_id or row.revoked_at is not None:
        raise NotFound("Access token not found")
    row.revoked_at = utcnow()
    audit.record(
        session=session,
        actor=actor,
        action="access_token.revoke",
        resource_type="access_token",
        resource_id=str(row.id),
        details={"name": row.name},
    )
    await session.commit()


_BY_HASH = (
    select(AccessToken, User)
    .join(User, User.id == AccessToken.user_id)
    .where(AccessToken.token_hash == bindparam("token_hash"))
)


@dataclass(frozen=True)
class TokenUser:
    """Who a live token acts for, with the roles it acts with (narrowed by its scope)."""

    user_id: uuid.UUID
    username: str
    roles: list[str]
    scope: str


async def authenticate(*, session: AsyncSession, token: str) -> TokenUser:
    """The active user behind a live token, with the user's current roles narrowed by the
    token's scope; Unauthorized (one message for every reason) otherwise."""
    found = (await session.execute(_BY_HASH, {"token_hash": digest(token)})).one_or_none()
    now = utcnow()
    if found is None:
        raise Unauthorized(INVALID)
    row, user = found
    if row.revoked_at is not None or row.expires_at <= now or not user.is_active:
        raise Unauthorized(INVALID)
    found_user = TokenUser(user.id, user.username, narrowed_roles(user.roles, row.scope), row.scope)
    if row.last_used_at is None or now - row.last_used_at >= TOUCH_EVERY:
        await _touch(session, row.id, now)
    return found_user


async def _touch(session: AsyncSession, token_id: uuid.UUID, now: datetime) -> None:
    # Committed here, before the route runs: a read-only route never commits its own session.
    await session.execute(
        update(AccessToken).where(AccessToken.id == token_id).values(last_used_at=now)
    )
    await session.commit()


def narrowed_roles(roles: list[str], scope: str) -> list[str]:
    """The roles a token of `scope` acts with: `read` is viewer rights at most."""
    if scope == "full":
        return list(roles)
    return ["viewer"] if highest_rank(roles) > 0 else []
