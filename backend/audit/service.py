"""Writing and reading audit rows. Callers commit: the row lands in the same transaction."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit.models import AuditEvent
from backend.codes import Code
from backend.errors import AppError
from backend.principal import Principal


def record(
    *,
    session: AsyncSession,
    actor: Principal | None,
    action: str,
    resource_type: str | None = None,
    resource_id: str | None = None,
    outcome: str = "success",
    details: dict[str, Any] | None = None,
    actor_username: str | None = None,
    request_id: str | None = None,
) -> AuditEvent:
    """Add an audit row to the session (not committed here); a call made within an agent run
    (`actor.run_id`) says so in `details.run_id`, one through a channel (`actor.channel`, e.g.
    MCP) in `details.channel`."""
    details = dict(details or {})
    if actor is not None and actor.run_id is not None:
        details["run_id"] = actor.run_id
    if actor is not None and actor.channel is not None:
        details["channel"] = actor.channel
    event = AuditEvent(
        actor_user_id=actor.user_id if actor else None,
        actor_username=actor.username if actor else actor_username,
        service_client_id=actor.service_client_id if actor else None,
        action=action,
        resource_type=resource_type,
        resource_id=resource_id,
        outcome=outcome,
        details=details,
        request_id=request_id or (actor.request_id if actor else None),
    )
    session.add(event)
    return event


@asynccontextmanager
async def run_read(
    *,
    session: AsyncSession,
    actor: Principal | None,
    action: str,
    resource_type: str | None = None,
    resource_id: str | None = None,
    details: dict[str, Any] | None = None,
) -> AsyncIterator[None]:
    """Audit a read made as a tool call of an agent run (`actor.run_id` set), with its outcome
    and, on a refusal, the error code; other reads are not audited.

    The row is committed on its own: a read has no transaction of its own to join.
    """
    if actor is None or actor.run_id is None:
        yield
        return

    def trail(outcome: str, extra: dict[str, Any]) -> None:
        record(
            session=session,
            actor=actor,
            action=action,
            resource_type=resource_type,
            resource_id=resource_id,
            outcome=outcome,
            details={**(details or {}), **extra},
        )

    try:
        yield
    except AppError as exc:
        trail("failure", {"code": exc.code})
        await session.commit()
        raise
    except asyncio.CancelledError:
        # The caller went away mid-read (e.g. the agent's run was stopped): still one row.
        trail("failure", {"code": Code.CANCELLED})
        await asyncio.shield(session.commit())
        raise
    trail("success", {})
    await session.commit()


async def search(
    *,
    session: AsyncSession,
    actor: str | None,
    action: str | None,
    resource_type: str | None,
    resource_id: str | None,
    since: datetime | None,
    until: datetime | None,
    limit: int,
    offset: int,
) -> tuple[list[AuditEvent], int]:
    query = select(AuditEvent)
    if actor:
        try:
            query = query.where(AuditEvent.actor_user_id == uuid.UUID(actor))
        except ValueError:
            query = query.where(AuditEvent.actor_username == actor)
    if action:
        query = query.where(AuditEvent.action == action)
    if resource_type:
        query = query.where(AuditEvent.resource_type == resource_type)
    if resource_id:
        query = query.where(AuditEvent.resource_id == resource_id)
    if since:
        query = query.where(AuditEvent.created_at >= since)
    if until:
        query = query.where(AuditEvent.created_at < until)
    total = await session.scalar(select(func.count()).select_from(query.subquery()))
    rows = await session.scalars(
        query.order_by(AuditEvent.created_at.desc(), AuditEvent.id.desc())
        .limit(limit)
        .offset(offset)
    )
    return list(rows), int(total or 0)
