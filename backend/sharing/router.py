"""Sharing routes: share and revoke an own conversation, read a shared one, export an own one."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Path, Query, Response, status

from backend.conversations.schemas import PREFIX
from backend.db import utcnow
from backend.deps import CurrentPrincipal, SessionDep
from backend.errors import responses
from backend.sharing import service, transcript
from backend.sharing.schemas import ConversationExport, ExportFormat, SharedConversation, ShareRead

router = APIRouter(tags=["sharing"])
ShareId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


@router.post(
    PREFIX + "/{conversation_id}/share",
    response_model=ShareRead,
    status_code=status.HTTP_201_CREATED,
    responses=responses(401, 404, 422),
)
async def share(
    conversation_id: uuid.UUID, principal: CurrentPrincipal, session: SessionDep
) -> ShareRead:
    """A read-only snapshot of an own conversation as it is now, for any signed-in user with
    the link; sharing again refreshes it under the same `share_id`."""
    found = await service.share(session=session, actor=principal, conversation_id=conversation_id)
    return ShareRead(
        share_id=found.share_id, url=service.url_of(found.share_id), created_at=found.created_at
    )


@router.delete(
    PREFIX + "/{conversation_id}/share",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=responses(401, 404, 422),
)
async def revoke(
    conversation_id: uuid.UUID, principal: CurrentPrincipal, session: SessionDep
) -> Response:
    """Revoke the conversation's share: its `share_id` is 404 from now on."""
    await service.revoke(session=session, actor=principal, conversation_id=conversation_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/api/shared/{share_id}", response_model=SharedConversation, responses=responses(401, 404, 422)
)
async def shared(
    share_id: ShareId, principal: CurrentPrincipal, session: SessionDep
) -> SharedConversation:
    """A shared conversation (any signed-in user): the snapshot, without debug records or file
    contents."""
    return SharedConversation.model_validate(
        await service.shared(session=session, share_id=share_id)
    )


@router.get(
    PREFIX + "/{conversation_id}/export",
    response_model=ConversationExport,
    responses={
        **responses(401, 404, 422),
        200: {
            "content": {"text/markdown": {"schema": {"type": "string"}}},
            "description": "The transcript (md) or the conversation's rows (json)",
        },
    },
)
async def export(
    conversation_id: uuid.UUID,
    principal: CurrentPrincipal,
    session: SessionDep,
    format: Annotated[ExportFormat, Query()] = "md",
) -> Response:
    """An own conversation as a Markdown transcript or as JSON (`{title, created_at,
    messages}`), as a download."""
    conversation, rows = await service.export_rows(
        session=session, actor=principal, conversation_id=conversation_id
    )
    name = f"conversation-{conversation_id}.{format}"
    disposition = {"Content-Disposition": f'attachment; filename="{name}"'}
    if format == "json":
        exported = ConversationExport.model_validate(transcript.as_json(conversation, rows))
        body = exported.model_dump_json(indent=2)
        return Response(content=body, media_type="application/json", headers=disposition)
    text = transcript.markdown(conversation, rows, exported_at=utcnow())
    return Response(content=text, media_type="text/markdown; charset=utf-8", headers=disposition)
