"""Asking an external MCP server which tools it has (the SDK's own client), within a time limit;
a server that does not answer in time, or answers an error, is `unreachable`."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
from mcp import ClientSession, McpError
from mcp.client.streamable_http import streamablehttp_client

log = logging.getLogger(__name__)

MAX_TOOLS = 200
# Kept whole for the model (the agent cuts only past the provider's own limit, and keeps the
# rest reachable); this only bounds a server that sends pages of text.
MAX_DESCRIPTION_CHARS = 16_000


@dataclass(frozen=True)
class Listing:
    status: str  # "ok" | "unreachable"
    tools: list[dict[str, Any]]


async def list_tools(url: str, headers: dict[str, str], *, timeout_s: float) -> Listing:
    """The server's tools ({name, description, input_schema, annotations?}), or `unreachable`
    and none; the annotations (readOnlyHint...) decide which ask first (common/mcp_confirm)."""
    try:
        with anyio.fail_after(timeout_s):
            tools = await _list(url, headers, timeout_s)
    except (TimeoutError, OSError, httpx.HTTPError, McpError, ExceptionGroup) as exc:
        # Never the headers: only what kind of failure it was.
        log.info("MCP server %s did not list its tools: %s", url, type(exc).__name__)
        return Listing("unreachable", [])
    return Listing("ok", tools)


async def _list(url: str, headers: dict[str, str], timeout_s: float) -> list[dict[str, Any]]:
    async with (
        streamablehttp_client(url, headers=headers, timeout=timeout_s) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = await session.list_tools()
    return [_described(tool) for tool in listed.tools[:MAX_TOOLS]]


def _described(tool: Any) -> dict[str, Any]:
    described: dict[str, Any] = {
        "name": tool.name,
        "description": (tool.description or "")[:MAX_DESCRIPTION_CHARS],
        "input_schema": tool.inputSchema,
    }
    if tool.annotations is not None:
        described["annotations"] = tool.annotations.model_dump(mode="json", exclude_none=True)
    return described
