"""The `mcp` SDK's own client against our MCP endpoint, and an external MCP server made with the
SDK (tests/fakes/mcp_server.py) run as a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamablehttp_client

from tests.conftest import bearer
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


@pytest.fixture(scope="module")
def external(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeServer]:
    server = FakeServer(tmp_path_factory.mktemp("mcp") / "wiped.txt").start()
    yield server
    server.kill()


@pytest.fixture(scope="module")
def quick_agent(start_agent: Any) -> Iterator[str]:
    """An agent that asks for the server list on every turn and waits 3 s for a server."""
    with start_agent(AGENT__MCP_REFRESH_S="0", AGENT__MCP_TIMEOUT_S="3") as (base, _proc):
        deadline = time.monotonic() + 60
        while httpx.get(f"{base}/readyz").status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        yield base


@pytest.fixture()
def register(api: httpx.Client, tokens: dict[str, str], external: FakeServer):
    created: list[str] = []

    def add(**fields: Any) -> dict[str, Any]:
        body = {
            "name": f"ext{uuid.uuid4().hex[:6]}",
            "url": external.url,
            "headers": {"X-Api-Key": SECRET},
            **fields,
        }
        response = api.post("/api/admin/mcp-servers", json=body, headers=bearer(tokens["admin"]))
        assert response.status_code == 201, response.text
        created.append(response.json()["id"])
        return dict(response.json())

    yield add
    for server_id in created:
        api.delete(f"/api/admin/mcp-servers/{server_id}", headers=bearer(tokens["admin"]))


def conversation_of(api: httpx.Client, token: str) -> str:
    response = api.post("/api/assistant/conversations", json={}, headers=bearer(token))
    assert response.status_code == 201, response.text
    return str(response.json()["id"])
