"""External MCP servers (admin): create, list with their tools and status, update, delete.
Header values are sealed before they are stored and never leave this module opened, except
to the server they belong to (a listing of its tools)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.codes import Code
from backend.config import Settings
from backend.db import utcnow
from backend.errors import Conflict, NotFound
from backend.mcp_tools import probe
from backend.mcp_tools.models import McpServer
from backend.mcp_tools.schemas import (
    McpServerAgentPage,
    McpServerCreate,
    McpServerForAgent,
    McpServerPage,
    McpServerRead,
    McpServerStatus,
    McpServerUpdate,
    McpToolRead,
)
from backend.principal import Principal
from common import mcp_confirm
from common.sealed import SealError, seal, unseal

LIST_TIMEOUT_S = 5.0  # an admin page's listing waits at most this long for each server
MAX_SERVERS = 100


async def create(
    *, session: AsyncSession, settings: Settings, actor: Principal, data: McpServerCreate
) -> McpServerRead:
    server = McpServer(
        name=data.name,
        url=data.url,
        enabled_tools=data.enabled_tools,
        confirm_tools=list(data.confirm_tools),
        min_role=data.min_role.value,
    )
    _set_headers(server, settings, data.headers)
    session.add(server)
    try:
        await session.flush()
    except IntegrityError as exc:
        await session.rollback()
        raise Conflict(f"An MCP server named {data.name!r} exists", code=Code.NAME_TAKEN) from exc
    _audit(session, actor, "mcp_server.create", server)
    await session.commit()
    await _refresh(session, settings, [server])
    return McpServerRead.model_validate(server)


async def list_all(*, session: AsyncSession, settings: Settings) -> McpServerPage:
    """Every server with its tools and status, each asked again now (at most a few seconds)."""
    servers = list(
        await session.scalars(select(McpServer).order_by(McpServer.name).limit(MAX_SERVERS))
    )
    await _refresh(session, settings, servers)
    return McpServerPage(items=[_status(server) for server in servers])


async def update(
    *,
    session: AsyncSession,
    settings: Settings,
    actor: Principal,
    server_id: uuid.UUID,
    data: McpServerUpdate,
) -> McpServerRead:
    server = await _get(session, server_id)
    changes = data.model_dump(exclude_unset=True)
    if "url" in changes and data.url is not None:
        server.url = data.url
    if "headers" in changes:
        _set_headers(server, settings, data.headers)
    if "enabled_tools" in changes:
        server.enabled_tools = data.enabled_tools
    if "confirm_tools" in changes:
        server.confirm_tools = list(data.confirm_tools or [])
    if data.min_role is not None:
        server.min_role = data.min_role.value
    _audit(session, actor, "mcp_server.update", server, changed=sorted(changes))
    await session.commit()
    await _refresh(session, settings, [server])
    return McpServerRead.model_validate(server)


async def delete(*, session: AsyncSession, actor: Principal, server_id: uuid.UUID) -> None:
    server = await _get(session, server_id)
    _audit(session, actor, "mcp_server.delete", server)
    await session.delete(server)
    await session.commit()


async def for_agent(*, session: AsyncSession) -> McpServerAgentPage:
    """Every server as the agent offers it: the tools last listed, the headers still sealed."""
    servers = await session.scalars(select(McpServer).order_by(McpServer.name).limit(MAX_SERVERS))
    return McpServerAgentPage(
        items=[
            McpServerForAgent(
                name=s.name,
                url=s.url,
                headers_sealed=s.headers_sealed,
                enabled_tools=s.enabled_tools,
                confirm_tools=s.confirm_tools,
                min_role=s.min_role,
                tools=s.tools,
            )
            for s in servers
        ]
    )


def _set_headers(server: McpServer, settings: Settings, headers: dict[str, str] | None) -> None:
    server.header_names = sorted(headers or {})
    server.headers_sealed = seal(settings.mcp_key, headers) if headers else None


def _opened(server: McpServer, settings: Settings) -> dict[str, str]:
    if not server.headers_sealed:
        return {}
    try:
        return unseal(settings.mcp_key, server.headers_sealed)
    except SealError:
        return {}  # sealed under another key: the server will refuse, and shows unreachable


async def _refresh(session: AsyncSession, settings: Settings, servers: list[McpServer]) -> None:
    """Ask each server for its tools at once; store what each said, and when."""
    timeout = min(LIST_TIMEOUT_S, settings.agent.mcp_timeout_s)
    listings = await asyncio.gather(
        *(probe.list_tools(s.url, _opened(s, settings), timeout_s=timeout) for s in servers)
    )
    for server, listing in zip(servers, listings, strict=True):
        server.status, server.checked_at = listing.status, utcnow()
        if listing.status == "ok":
            server.tools = listing.tools
    await session.commit()


def _status(server: McpServer) -> McpServerStatus:
    tools = [_tool(t, server.confirm_tools) for t in server.tools]
    return McpServerStatus(
        **McpServerRead.model_validate(server).model_dump(),
        tools=tools,
        status=server.status if server.status in ("ok", "unreachable") else "unknown",
    )


def _tool(listed: dict[str, Any], confirm_tools: list[str]) -> McpToolRead:
    reason = mcp_confirm.tool_reason(listed, confirm_tools)
    return McpToolRead(
        name=listed["name"],
        description=listed.get("description", ""),
        read_only=mcp_confirm.is_read_only(listed),
        confirm=mcp_confirm.asks_first(reason),
        confirm_reason=reason,
    )


async def _get(session: AsyncSession, server_id: uuid.UUID) -> McpServer:
    server = await session.get(McpServer, server_id)
    if server is None:
        raise NotFound("MCP server not found")
    return server


def _audit(
    session: AsyncSession,
    actor: Principal,
    action: str,
    server: McpServer,
    changed: list[str] | None = None,
) -> None:
    details: dict[str, object] = {
        "name": server.name,
        "url": server.url,
        "header_names": server.header_names,  # never the values
    }
    if changed is not None:
        details["changed"] = changed
    audit.record(
        session=session,
        actor=actor,
        action=action,
        resource_type="mcp_server",
        resource_id=str(server.id),
        details=details,
    )
