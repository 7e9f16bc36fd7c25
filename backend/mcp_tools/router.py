"""Agent-facing routes of tool calls served outside a chat (service identity only)."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from backend.deps import AgentPrincipal, SessionDep
from backend.errors import responses
from backend.mcp_tools import service
from backend.mcp_tools.schemas import ToolCallRecord

router = APIRouter(tags=["agent"])


@router.post(
    "/api/agent/tool-calls",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=responses(401, 403, 422),
    include_in_schema=False,
)
async def record_tool_call(
    body: ToolCallRecord, principal: AgentPrincipal, session: SessionDep
) -> Response:
    """Audit one tool call the agent served for the on-behalf-of user (details.channel says
    through what, from the agent's X-Channel)."""
    await service.record_call(session=session, actor=principal, data=body)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
