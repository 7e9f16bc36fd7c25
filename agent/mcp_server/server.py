"""The MCP server's handlers: `tools/list` is the caller's tools from the one registry,
`tools/call` runs one (agent/mcp_server/calls.py); mounted at /api/agent/mcp."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server

from agent.backend_client import BackendClient
from agent.errors import Code
from agent.mcp_server import calls
from agent.mcp_server.catalogue import Catalogue
from agent.mcp_server.endpoint import STATE_KEY, McpRequest

PATH = "/api/agent/mcp"
ELICITATION_TIMEOUT_S = 300.0  # a person reads the question and answers


class Parts:
    """What the handlers use, built at start-up (None until then)."""

    catalogue: Catalogue | None = None
    client: BackendClient | None = None


def build_server(parts: Callable[[], Parts]) -> Server[Any, Any]:
    server: Server[Any, Any] = Server("agent-chat", instructions=INSTRUCTIONS)

    def current() -> McpRequest:
        request = server.request_context.request
        found = getattr(getattr(request, "state", None), STATE_KEY, None)
        if not isinstance(found, McpRequest):
            raise RuntimeError("an MCP request without its caller")
        return found

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        catalogue = parts().catalogue
        return catalogue.listed(current().caller.roles) if catalogue is not None else []

    @server.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        found, request = parts(), current()
        if found.catalogue is None or found.client is None:
            return calls.error_result(Code.BACKEND_UNAVAILABLE, "The agent is starting; try again.")
        context = server.request_context

        async def ask(message: str, schema: dict[str, Any]) -> types.ElicitResult | None:
            if not request.can_elicit or request.session_id is None:
                return None
            if request.session_id in request.waiting:  # one question at a time per session
                return types.ElicitResult(action="cancel")
            with _waiting(request):
                try:
                    with anyio.fail_after(ELICITATION_TIMEOUT_S):
                        return await context.session.elicit_form(
                            message, schema, related_request_id=context.request_id
                        )
                except TimeoutError:
                    return types.ElicitResult(action="cancel")

        call = calls.Call(request.caller, name, dict(arguments or {}), calls.new_call_id())
        return await calls.serve(call, found.catalogue.tools, found.client, ask)

    return server


@contextmanager
def _waiting(request: McpRequest) -> Any:
    """While a call waits for its session's elicitation answer, answers go to its transport."""
    assert request.session_id is not None
    request.waiting[request.session_id] = request
    try:
        yield
    finally:
        if request.waiting.get(request.session_id) is request:
            del request.waiting[request.session_id]


INSTRUCTIONS = (
    "agent-chat: tools of a BI platform (dashboards, datasources, files, knowledge, logs), run "
    "with your own permissions. Deploys, commits and migrations ask you to confirm first."
)
