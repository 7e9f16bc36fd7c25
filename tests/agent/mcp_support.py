"""The `mcp` SDK's own client against our MCP endpoint, and an external MCP server made with the
SDK (tests/fakes/mcp_server.py) run as a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession, types
from mcp.client.streamable_http import streamablehttp_client

from tests.support.processes import ROOT, free_port, stop

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


SECRET = "mcp-header-secret-" + uuid.uuid4().hex


class FakeServer:
    """tests/fakes/mcp_server.py as a process of its own, which a test may kill."""

    def __init__(self, wiped: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.wiped = wiped
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> FakeServer:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fakes.mcp_server", str(self.port), SECRET],
            env={**os.environ, "WIPED_FILE": str(self.wiped)},
            cwd=ROOT,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{self.port}/", timeout=1)
                return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise AssertionError("the fake MCP server did not start")

    def kill(self) -> None:
        if self.proc is not None:
            stop(self.proc)
