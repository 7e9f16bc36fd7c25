"""Personal access tokens: a user's long-lived secrets, stored only as their SHA-256, and how
a request's token is checked (the routes that create, list and revoke them: `access_tokens/`)."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ForeignKey, String, bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, utcnow
from backend.errors import Unauthorized
from backend.identity.models import User
from backend.identity.roles import highest_rank

PREFIX = "acp_"
PREFIX_CHARS = len(PREFIX) + 8  # what lists show of a token: enough to tell tokens apart
# One message for a revoked, expired and unknown token alike: none of them confirms the others.
INVALID = "Invalid or expired access token"
# last_used_at is written at most this often per token: a script's burst costs one write.
TOUCH_EVERY = timedelta(minutes=1)


class AccessToken(Base):
    __tablename__ = "personal_access_tokens"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    scope: Mapped[str] = mapped_column(String(8))
    prefix: Mapped[str] = mapped_column(String(16))
    # SHA-256 of the whole token: the secret has 256 random bits, so a fast hash is enough
    # (no password-style stretching needed) and a lookup is one indexed equality.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    last_used_at: Mapped[datetime | None] = mapped_column(default=None)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)


def is_access_token(credential: str) -> bool:
    return credential.startswith(PREFIX)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


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
