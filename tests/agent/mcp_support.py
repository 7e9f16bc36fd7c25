"""The `mcp` SDK's own client against our MCP endpoint (tests of the MCP server)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from mcp import ClientSession, types
from mcp.client.streamable_http import streamablehttp_client

Answer = Callable[[Any, types.ElicitRequestParams], Awaitable[types.ElicitResult]]


def wait_ready(agent_url: str) -> None:
    """The agent answers /readyz once its tools are built (the MCP server's too)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if httpx.get(f"{agent_url}/readyz").status_code == 200:
            return
        time.sleep(0.2)
    raise AssertionError("the agent never became ready")


async def mcp_session(
    agent_url: str,
    token: str,
    action: Callable[[ClientSession], Awaitable[Any]],
    *,
    answer: Answer | None = None,
) -> Any:
    """Open a session as the holder of `token` (eliciting with `answer` when given), run
    `action` on it and return what it returns."""
    headers = {"Authorization": f"Bearer {token}"}
    url = f"{agent_url}/api/agent/mcp"
    async with (
        streamablehttp_client(url, headers=headers) as (read, write, _session_id),
        ClientSession(read, write, elicitation_callback=answer) as session,
    ):
        await session.initialize()
        return await action(session)


def answering(action: str, content: dict[str, Any] | None = None) -> tuple[Answer, list[Any]]:
    """An elicitation callback that answers `action` and remembers each question it got."""
    asked: list[Any] = []

    async def answer(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return answer, asked
