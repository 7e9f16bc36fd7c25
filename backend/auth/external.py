"""Signing in a person the directory or the provider vouched for: their roles from their groups,
their own account keyed by (issuer, subject), never a local account of the same name."""

from __future__ import annotations

import hashlib

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.auth.identity import ExternalIdentity, mapped_roles
from backend.codes import Code
from backend.config import Settings
from backend.db import utcnow
from backend.errors import Forbidden, Unauthorized
from backend.identity.models import User
from backend.principal import Principal


def audit_failure(
    *,
    session: AsyncSession,
    source: str,
    username: str | None,
    reason: str,
    request_id: str | None,
    user: User | None = None,
) -> None:
    """The audit row of a refused sign-in (never a password, code or token)."""
    audit.record(
        session=session,
        actor=None,
        actor_username=(username or "")[:64] or None,
        action="auth.login",
        resource_type="user",
        resource_id=str(user.id) if user else None,
        outcome="failure",
        details={"source": source, "reason": reason},
        request_id=request_id,
    )


async def sign_in(
    *, session: AsyncSession, settings: Settings, identity: ExternalIdentity, request_id: str | None
) -> User:
    """The person's account with the roles their groups map to now; `403 NO_ROLE` (and nothing
    created) when no group maps. Audits the outcome; commits."""
    roles = mapped_roles(identity.groups, settings.auth.role_map)
    user = await session.scalar(
        select(User).where(
            User.external_issuer == identity.issuer, User.external_subject == identity.subject
        )
    )
    if not roles or (user is not None and not user.is_active):
        reason = "no_role" if not roles else "inactive"
        audit_failure(
            session=session,
            source=identity.source,
            username=identity.username,
            reason=reason,
            request_id=request_id,
            user=user,
        )
        if user is not None and not roles:
            user.roles = []  # left every mapped group: no rights until a group maps again
        await session.commit()
        if not roles:
            raise Forbidden("You are in no group that has a role here", code=Code.NO_ROLE)
        raise Unauthorized("Sign-in refused", code=Code.INVALID_CREDENTIALS)
    if user is None:
        user = User(
            username=await _free_username(session, identity),
            password_hash="",
            source=identity.source,
            external_issuer=identity.issuer,
            external_subject=identity.subject,
            roles=roles,
        )
        session.add(user)
        await session.flush()
    user.roles, user.last_sign_in_at = roles, utcnow()
    audit.record(
        session=session,
        actor=Principal(user.id, user.username, roles, None, request_id),
        action="auth.login",
        resource_type="user",
        resource_id=str(user.id),
        details={"source": identity.source, "roles": roles},
        request_id=request_id,
    )
    await session.commit()
    return user


async def _free_username(session: AsyncSession, identity: ExternalIdentity) -> str:
    """The name the organisation gives, or, when an account holds it already, that name with a
    short mark of (issuer, subject): an account of their own, never someone else's."""
    wanted = identity.username[:64] or identity.subject[:64]
    if await session.scalar(select(User.id).where(User.username == wanted)) is None:
        return wanted
    mark = hashlib.sha256(f"{identity.issuer}\0{identity.subject}".encode()).hexdigest()[:8]
    return f"{wanted[:55]}.{identity.source}-{mark}"[:64]
