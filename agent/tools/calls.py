"""One check of a tool call's arguments, and one way to run a tool outside the graph.

`check_arguments` is the only place a call's arguments are checked against its tool's schema
(the catalogue's, common/tool_arguments.py, for the agent's own tools), with one text for every
caller: the graph before a call runs or is put to a person (agent/middleware.py), an edited
confirmation (agent/hitl.py, which answers INVALID_INPUT as CONTRACT.md says), a workflow step
(agent/workflows/engine.py) and an MCP call (agent/mcp_server/calls.py). An argument the schema
does not name is refused everywhere.

`run_tool` runs a built tool as the agent's ToolNode does (the caller's Context injected, the
backend deciding RBAC under the user's identity) for the two callers outside the graph: a
workflow step and an MCP call. Both raise an AgentError with a code and a message safe to show.
"""

from __future__ import annotations

import json
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError

from agent.context import Context
from agent.errors import AgentError, BackendError, Code

MAX_ERROR_CHARS = 300
MAX_PROBLEMS = 5


class InvalidArguments(AgentError):
    """The call's arguments are not a valid call of its tool; nothing ran."""

    code = Code.INVALID_ARGUMENTS


class ToolFailure(AgentError):
    """A tool run outside the graph failed: the backend refused, or the tool reported an error."""


def argument_model(tool: BaseTool | None) -> type[BaseModel] | None:
    """The Pydantic model of `tool`'s arguments as the model sees them; None if it has none
    (an external MCP server's tool, described by a JSON schema the server itself checks)."""
    schema = tool.tool_call_schema if tool is not None else None
    return schema if isinstance(schema, type) and issubclass(schema, BaseModel) else None


def invalid(exc: ValidationError) -> str:
    """The one text of a refused call: where and what, never the values."""
    problems = [
        f"{'.'.join(map(str, error['loc'])) or 'arguments'}: {error['msg']}"
        for error in exc.errors(include_input=False)[:MAX_PROBLEMS]
    ]
    return "Invalid arguments: " + "; ".join(problems)


def check_arguments(tool: BaseTool | None, args: Any) -> dict[str, Any]:
    """`args` as `tool`'s schema reads them (checked values, unset ones left out), or
    InvalidArguments: not a mapping, an argument the schema does not name, a bad value."""
    if not isinstance(args, dict):
        raise InvalidArguments("Invalid arguments: the arguments must be a mapping.")
    model = argument_model(tool)
    if model is None:
        return dict(args)
    known = set(model.model_fields) | {f.alias for f in model.model_fields.values() if f.alias}
    unknown = sorted(set(args) - known)
    if unknown:
        name = tool.name if tool is not None else "the tool"
        raise InvalidArguments(
            f"Invalid arguments: {name} has no argument {', '.join(unknown)[:200]}"
        )
    try:
        parsed = model.model_validate(args)
    except ValidationError as exc:
        raise InvalidArguments(invalid(exc)) from exc
    return parsed.model_dump(mode="json", exclude_unset=True)


# Person mode (CONTRACT.md, "Superset as the person"): these refusals keep their own code.
SUPERSET_REFUSALS = frozenset({Code.SUPERSET_LOGIN_REQUIRED, Code.SUPERSET_FORBIDDEN})


def safe_backend_error(exc: BackendError, context: Any) -> tuple[str, str]:
    """(code, message) of a backend refusal as a tool error may show it: no raw body, no token."""
    if exc.status == 403 and exc.code in SUPERSET_REFUSALS:  # person mode: their Superset's word
        return exc.code, exc.message[:MAX_ERROR_CHARS]
    if exc.status == 403:
        roles = ", ".join(context.roles) if isinstance(context, Context) else "unknown"
        detail = exc.message.rstrip(".") if exc.message else "not allowed"
        return Code.FORBIDDEN, f"Permission denied: {detail} (the user's roles: {roles})."
    if exc.status >= 500:
        return exc.code or Code.BACKEND_ERROR, "The platform could not complete this; try later."
    message = exc.message[:MAX_ERROR_CHARS]
    token = getattr(context, "user_token", None)
    if token and token in message:
        message = message.replace(token, "[redacted]")
    return exc.code or Code.BACKEND_ERROR, message


async def run_tool(
    tool: BaseTool,
    args: dict[str, Any],
    context: Context,
    call_id: str,
    config: RunnableConfig | None = None,
) -> Any:
    """Run `tool` with checked `args` outside the graph, as its ToolNode would; its output
    (JSON read back where it is JSON). A refusal or failure is InvalidArguments or ToolFailure."""
    runtime: ToolRuntime[Context, Any] = ToolRuntime(
        state={"messages": []},
        context=context,
        config=config or {},
        stream_writer=lambda _chunk: None,
        tool_call_id=call_id,
        store=None,
    )
    call = {"type": "tool_call", "name": tool.name, "args": {**args, "runtime": runtime}}
    try:
        message = await tool.ainvoke({**call, "id": call_id})
    except BackendError as exc:
        code, text = safe_backend_error(exc, context)
        raise ToolFailure(text, code=code) from exc
    except ValidationError as exc:
        raise InvalidArguments(invalid(exc)) from exc
    content = message.content if isinstance(message, ToolMessage) else message
    if isinstance(message, ToolMessage) and message.status == "error":
        raise ToolFailure(str(content)[:MAX_ERROR_CHARS], code=Code.TOOL_ERROR)
    try:
        return json.loads(content) if isinstance(content, str) else content
    except ValueError:
        return content
