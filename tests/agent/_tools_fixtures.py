"""Fixtures and helpers of the tool and demo-model tests: a real BackendClient against the suite's
backend, a Context per demo role, and a way to call a tool the way the agent's ToolNode does."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from langchain.tools import BaseTool, ToolRuntime
from langchain_core.messages import ToolMessage
from pydantic import SecretStr

from agent.backend_client import BackendClient
from agent.config import Settings
from agent.context import Context
from agent.tools.registry import build_tools
from tests.conftest import AGENT_CLIENT_SECRET, bearer


def agent_settings(backend_url: str) -> Settings:
    return Settings(
        backend_url=backend_url,
        agent_client_id="agent-chat",
        agent_client_secret=SecretStr(AGENT_CLIENT_SECRET),
    )


class Recorder:
    """Every request the BackendClient sends (an httpx event hook on the real client)."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    async def __call__(self, request: httpx.Request) -> None:
        self.requests.append(request)

    def paths(self) -> list[str]:
        return [r.url.path for r in self.requests if r.url.path != "/api/auth/service-token"]


@pytest.fixture()
async def recorder() -> Recorder:
    return Recorder()


@pytest.fixture()
async def backend_client(backend_url: str, recorder: Recorder) -> AsyncIterator[BackendClient]:
    http = httpx.AsyncClient(base_url=backend_url, timeout=30, event_hooks={"request": [recorder]})
    client = BackendClient(agent_settings(backend_url), http=http)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture()
def tools(backend_client: BackendClient) -> dict[str, BaseTool]:
    return {t.name: t for t in build_tools(backend_client)}


@pytest.fixture(scope="session")
def contexts(api: httpx.Client, tokens: dict[str, str]) -> dict[str, Context]:
    """A run Context for each demo role, as the agent builds it from a verified user JWT."""
    found = {}
    for role, token in tokens.items():
        me = api.get("/api/auth/me", headers=bearer(token))
        assert me.status_code == 200, me.text
        user = me.json()
        found[role] = Context(
            user_token=token,
            user_id=str(user["id"]),
            username=user["username"],
            roles=tuple(user["roles"]),
            conversation_id=str(uuid.uuid4()),
        )
    return found


def runtime(context: Context | None) -> ToolRuntime[Context, Any]:
    """What ToolNode injects; `context=None` stands for a run started without a user."""
    return ToolRuntime(
        state={"messages": []},
        context=context,  # type: ignore[arg-type]
        config={},
        stream_writer=lambda _chunk: None,
        tool_call_id="call_1",
        store=None,
    )


async def run_tool(tool: BaseTool, args: dict[str, Any], context: Context | None) -> Any:
    """Invoke `tool` as ToolNode does (a tool call with the runtime injected); parsed JSON."""
    call = {
        "type": "tool_call",
        "name": tool.name,
        "args": {**args, "runtime": runtime(context)},
        "id": "call_1",
    }
    message = await tool.ainvoke(call)
    assert isinstance(message, ToolMessage)
    return json.loads(str(message.content))
