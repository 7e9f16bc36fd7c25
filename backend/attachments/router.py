"""Attachment routes: the agent records what a user attached; the owner lists them."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, status

from backend.attachments import service
from backend.attachments.schemas import (
    AttachmentBatch,
    AttachmentDetail,
    AttachmentPage,
    AttachmentRead,
)
from backend.deps import AgentPrincipal, CurrentPrincipal, Page, SessionDep, SettingsDep
from backend.errors import responses

router = APIRouter(tags=["attachments"])
PATH = "/api/assistant/conversations/{conversation_id}/attachments"


@router.post(
    PATH,
    response_model=AttachmentPage,
    status_code=status.HTTP_201_CREATED,
    responses=responses(401, 403, 404, 409, 413, 422),
)
async def create(
    conversation_id: uuid.UUID,
    body: AttachmentBatch,
    principal: AgentPrincipal,
    session: SessionDep,
    settings: SettingsDep,
) -> AttachmentPage:
    """Record one message's attachments (agent service, on behalf of the owner)."""
    rows = await service.create_many(
        session=session,
        actor=principal,
        settings=settings,
        conversation_id=conversation_id,
        data=body,
    )
    return AttachmentPage(items=[AttachmentRead.model_validate(r) for r in rows], total=len(rows))


@router.get(PATH, response_model=AttachmentPage, responses=responses(401, 404, 422))
async def list_(
    conversation_id: uuid.UUID, principal: CurrentPrincipal, session: SessionDep, page: Page
) -> AttachmentPage:
    """The conversation's attachments, oldest first (without their extracted text)."""
    rows, total = await service.list_(
        session=session,
        actor=principal,
        conversation_id=conversation_id,
        limit=page.limit,
        offset=page.offset,
    )
    return AttachmentPage(items=[AttachmentRead.model_validate(r) for r in rows], total=total)


@router.get(
    PATH + "/{attachment_id}", response_model=AttachmentDetail, responses=responses(401, 404, 422)
)
async def get(
    conversation_id: uuid.UUID,
    attachment_id: uuid.UUID,
    principal: CurrentPrincipal,
    session: SessionDep,
) -> AttachmentDetail:
    """One attachment with the text the agent extracted from it."""
    row = await service.get(
        session=session,
        actor=principal,
        conversation_id=conversation_id,
        attachment_id=attachment_id,
    )
    return AttachmentDetail.model_validate(row)
