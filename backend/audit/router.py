"""Audit trail for admins."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query

from backend.audit import service
from backend.audit.schemas import AuditPage, AuditRead
from backend.deps import Admin, Page, SessionDep
from backend.errors import responses

router = APIRouter(tags=["audit"])


@router.get("/api/audit", response_model=AuditPage, responses=responses(401, 403, 422))
async def list_audit(
    principal: Admin,
    session: SessionDep,
    page: Page,
    actor: Annotated[str | None, Query(max_length=64, description="user id or username")] = None,
    action: Annotated[str | None, Query(max_length=64)] = None,
    resource_type: Annotated[str | None, Query(max_length=64)] = None,
    resource_id: Annotated[str | None, Query(max_length=128)] = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> AuditPage:
    """Audit rows, newest first, filtered by actor, action, resource and time range."""
    rows, total = await service.search(
        session=session,
        actor=actor,
        action=action,
        resource_type=resource_type,
        resource_id=resource_id,
        since=since,
        until=until,
        limit=page.limit,
        offset=page.offset,
    )
    return AuditPage(items=[AuditRead.model_validate(r) for r in rows], total=total)
