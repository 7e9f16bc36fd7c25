"""External MCP servers (admin CRUD), and the agent's side: the servers it offers and the
audit of tool calls it served outside a chat (service identity only)."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Response, status

from backend.deps import Admin, AgentPrincipal, SessionDep, SettingsDep
from backend.errors import responses
from backend.mcp_tools import servers, service
from backend.mcp_tools.schemas import (
    McpServerAgentPage,
    McpServerCreate,
    McpServerPage,
    McpServerRead,
    McpServerUpdate,
    ToolCallRecord,
)

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


@router.post(
    "/api/admin/mcp-servers",
    response_model=McpServerRead,
    status_code=status.HTTP_201_CREATED,
    responses=responses(401, 403, 409, 422),
    tags=["admin"],
)
async def create_server(
    body: McpServerCreate, principal: Admin, session: SessionDep, settings: SettingsDep
):
    """Add an external MCP server (Streamable HTTP); header values are stored encrypted."""
    return await servers.create(session=session, settings=settings, actor=principal, data=body)


@router.get(
    "/api/admin/mcp-servers",
    response_model=McpServerPage,
    responses=responses(401, 403),
    tags=["admin"],
)
async def list_servers(principal: Admin, session: SessionDep, settings: SettingsDep):
    """Every external MCP server with its tools and whether it answers now."""
    return await servers.list_all(session=session, settings=settings)


@router.patch(
    "/api/admin/mcp-servers/{server_id}",
    response_model=McpServerRead,
    responses=responses(401, 403, 404, 422),
    tags=["admin"],
)
async def update_server(
    server_id: uuid.UUID,
    body: McpServerUpdate,
    principal: Admin,
    session: SessionDep,
    settings: SettingsDep,
):
    """Change a server (a new `headers` replaces all of them)."""
    return await servers.update(
        session=session, settings=settings, actor=principal, server_id=server_id, data=body
    )


@router.delete(
    "/api/admin/mcp-servers/{server_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=responses(401, 403, 404, 422),
    tags=["admin"],
)
async def delete_server(server_id: uuid.UUID, principal: Admin, session: SessionDep) -> Response:
    """Remove a server: the agent stops offering its tools."""
    await servers.delete(session=session, actor=principal, server_id=server_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/api/agent/mcp-servers",
    response_model=McpServerAgentPage,
    responses=responses(401, 403),
    include_in_schema=False,
)
async def servers_for_agent(principal: AgentPrincipal, session: SessionDep):
    """The servers as the agent offers them (service identity only; headers stay sealed)."""
    return await servers.for_agent(session=session)
