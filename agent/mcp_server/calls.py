"""One MCP tool call: allowed? arguments valid? confirmed by the person (elicitation)? then run
under the caller's identity (the backend decides RBAC) and audited with channel "mcp"."""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool
from mcp import types

from agent.auth import User
from agent.backend_client import UNANSWERED, BackendClient, BackendError
from agent.context import Context
from agent.errors import AgentError, Code
from agent.mcp_server.catalogue import may_run
from agent.tools.calls import InvalidArguments, check_arguments, run_tool
from agent.tools.names import CONFIRM_TOOLS, describe_call

log = logging.getLogger(__name__)

CHANNEL = "mcp"
# What the person is asked to fill in: one yes/no, so any client's form can render it.
CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "confirm": {
            "type": "boolean",
            "title": "Run it",
            "description": "Tick to let the platform run this action",
        }
    },
    "required": ["confirm"],
}

Ask = Callable[[str, dict[str, Any]], Awaitable[types.ElicitResult | None]]
"""Sends `elicitation/create` (message, schema); None: the client cannot be asked."""


class Refused(Exception):
    """The call ends with a tool error and nothing ran."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Call:
    caller: User
    tool: str
    arguments: dict[str, Any]
    call_id: str


async def serve(
    call: Call, tools: dict[str, BaseTool], client: BackendClient, ask: Ask
) -> types.CallToolResult:
    """Run one call to the end, audited; a refusal or failure is an isError result."""
    started = time.monotonic()
    context = Context(
        user_token=call.caller.token,
        user_id=call.caller.user_id,
        username=call.caller.username,
        roles=call.caller.roles,
        conversation_id="",
        audit_run_id=f"mcp-{call.call_id}",
        channel=CHANNEL,
    )
    tool = tools.get(call.tool)
    try:
        if tool is None or not may_run(call.caller.roles, call.tool):
            raise Refused(Code.FORBIDDEN, f"The tool {call.tool!r} is not available to you.")
        arguments = _checked(tool, call.arguments)
        if call.tool in CONFIRM_TOOLS:
            await _confirmed(call.tool, arguments, ask)
        output = await _run(tool, arguments, context, call.call_id)
    except Refused as exc:
        await _audit(client, context, call, "failure", exc.code, started)
        return error_result(exc.code, exc.message)
    await _audit(client, context, call, "success", None, started)
    structured = output if isinstance(output, dict) else {"result": output}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(output, default=str))],
        structuredContent=structured,
    )


def _checked(tool: BaseTool, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        check_arguments(tool, arguments)
    except InvalidArguments as exc:
        raise Refused(exc.code, exc.message) from exc
    return arguments


async def _confirmed(tool: str, arguments: dict[str, Any], ask: Ask) -> None:
    """Ask the person; only an accepted form with `confirm: true` lets the call run."""
    message = (
        f"{describe_call(tool, arguments)}.\n"
        f"Tool: {tool}\nArguments: {json.dumps(arguments, default=str)}\nRun it?"
    )
    answer = await ask(message, CONFIRM_SCHEMA)
    if answer is None:
        raise Refused(
            Code.CONFIRMATION_REQUIRED,
            f"{tool} needs a person's confirmation, and this client cannot ask for it "
            "(it did not declare the elicitation capability).",
        )
    if answer.action != "accept" or (answer.content or {}).get("confirm") is not True:
        raise Refused(Code.CONFIRMATION_REQUIRED, f"{tool} was not confirmed; nothing ran.")


async def _run(tool: BaseTool, arguments: dict[str, Any], context: Context, call_id: str) -> Any:
    """Run the tool as the agent's ToolNode does: the Context injected, the backend's RBAC."""
    try:
        return await run_tool(tool, arguments, context, call_id)
    except AgentError as exc:
        raise Refused(exc.code, exc.message) from exc


def error_result(code: str, message: str) -> types.CallToolResult:
    body = {"code": code, "message": message}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(body))],
        structuredContent=body,
        isError=True,
    )


async def _audit(
    client: BackendClient,
    context: Context,
    call: Call,
    outcome: str,
    code: str | None,
    started: float,
) -> None:
    record = {
        "tool": call.tool[:100],
        "call_id": call.call_id,
        "outcome": outcome,
        "code": code,
        "arguments": call.arguments,
        "duration_ms": int((time.monotonic() - started) * 1000),
    }
    try:
        await client.call(context, "POST", "/api/agent/tool-calls", json=record)
    except (BackendError, *UNANSWERED) as exc:
        # The call itself was answered; a lost audit row is logged (never the arguments).
        log.warning("MCP call of %s not audited: %s", call.tool, type(exc).__name__)


def new_call_id() -> str:
    return uuid.uuid4().hex[:24]
