"""Calling one external MCP tool with the SDK's own client: bounded in time and in size, its
failures a tool error with a stable code (MCP_UNAVAILABLE: down, slow or refusing us;
MCP_ERROR: the tool answered an error), never a broken run."""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import httpx
from langchain_core.tools import StructuredTool, ToolException
from mcp import ClientSession, McpError
from mcp.client.streamable_http import streamablehttp_client

from agent.errors import Code
from agent.external.servers import ExternalTool
from agent.tools.shaping import MAX_TEXT_CHARS, cap_text

log = logging.getLogger(__name__)


def failure(code: str, message: str) -> ToolException:
    """What the tool raises: its text is the error observation the card and the model see."""
    return ToolException(json.dumps({"error": {"code": code, "message": message}}))


def as_tool(external: ExternalTool, timeout_s: float) -> StructuredTool:
    """A LangChain tool for one run's call (the agent's tool node runs it, so it streams as a
    tool card like the built-in ones)."""

    async def call(**arguments: Any) -> dict[str, Any]:
        return await _call(external, arguments, timeout_s)

    return StructuredTool(
        name=external.name,
        description=external.description or external.tool,
        args_schema=external.input_schema or {"type": "object", "properties": {}},
        coroutine=call,
        handle_tool_error=lambda exc: str(exc),
    )


async def _call(
    external: ExternalTool, arguments: dict[str, Any], timeout_s: float
) -> dict[str, Any]:
    try:
        with anyio.fail_after(timeout_s):
            result = await _request(external, arguments, timeout_s)
    except TimeoutError as exc:
        raise failure(
            Code.MCP_UNAVAILABLE, f"{external.server} did not answer within {timeout_s:g} s."
        ) from exc
    except (OSError, httpx.HTTPError, McpError, ExceptionGroup) as exc:
        log.info("external MCP tool %s failed: %s", external.name, type(exc).__name__)
        raise failure(
            Code.MCP_UNAVAILABLE, f"{external.server} is unreachable or refused the call."
        ) from exc
    text = "\n".join(
        getattr(block, "text", "")
        for block in result.content
        if getattr(block, "type", "") == "text"
    )
    if result.isError:
        raise failure(Code.MCP_ERROR, cap_text(text or "The tool answered an error.", 300)[0])
    shown, cut = cap_text(text, MAX_TEXT_CHARS)
    # Data for the model, marked as such: never instructions to the platform.
    return {
        "server": external.server,
        "tool": external.tool,
        "result": shown,
        **({"truncated": True} if cut else {}),
    }


async def _request(external: ExternalTool, arguments: dict[str, Any], timeout_s: float) -> Any:
    async with (
        streamablehttp_client(external.url, headers=dict(external.headers), timeout=timeout_s) as (
            read,
            write,
            _,
        ),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await session.call_tool(external.tool, arguments)
