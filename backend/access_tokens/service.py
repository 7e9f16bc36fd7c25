"""Create, list, revoke and check personal access tokens; creation and revocation audited."""

from __future__ import annotations

import secrets
import uuid
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.access_tokens.schemas import (
    AccessTokenCreate,
    AccessTokenCreated,
    AccessTokenPage,
    AccessTokenRead,
)
from backend.audit import service as audit
from backend.db import utcnow
from backend.errors import NotFound
from backend.identity.access_tokens import PREFIX, PREFIX_CHARS, AccessToken, digest
from backend.principal import Principal

MAX_TOKENS_PER_USER = 100


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
