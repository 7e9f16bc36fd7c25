"""Debug record routes: the owner reads a turn's model calls; the agent writes them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from backend.debug import service
from backend.debug.schemas import DebugRecordRead, DebugRecordStored, DebugRecordWrite
from backend.deps import AgentPrincipal, CurrentPrincipal, SessionDep
from backend.errors import responses

router = APIRouter(prefix="/api/debug", tags=["debug"])
MessageId = Annotated[int, Path(ge=1, le=2**63 - 1, description="The assistant history row")]


@router.get("/{message_id}", response_model=DebugRecordRead, responses=responses(401, 404, 422))
async def get(
    message_id: MessageId, principal: CurrentPrincipal, session: SessionDep
) -> DebugRecordRead:
    """Every model call of that turn, as sent and received, credentials removed (owner only)."""
    record = await service.get(session=session, actor=principal, message_id=message_id)
    return DebugRecordRead.model_validate(record)


@router.put(
    "/{message_id}", response_model=DebugRecordStored, responses=responses(401, 403, 404, 422)
)
async def put(
    message_id: MessageId, body: DebugRecordWrite, principal: AgentPrincipal, session: SessionDep
) -> DebugRecordStored:
    """Store the turn's calls (agent service, on behalf of the conversation's owner); answered
    with a receipt, not the record (`GET` reads it)."""
    stored = await service.put(session=session, actor=principal, message_id=message_id, data=body)
    return DebugRecordStored.model_validate(stored)
