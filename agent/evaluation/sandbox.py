"""An evaluation must not change the platform: the tools that write are answered here, never run.

`create_branch` needs no confirmation, so without this an eval would create branches. It gets a
plausible synthetic result (a fresh branch id), so a multi-step request ("create a branch and
commit to it") goes on as it would for real. The confirmed tools never get this far in an eval
(the confirmation interrupt ends the case first), but if one ever did, it is refused here too.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from agent.context import Context
from agent.errors import Code
from agent.tools.names import CREATE_BRANCH, WRITE_TOOLS

FIRST_SYNTHETIC_ID = 900_001  # far above the demo data's ids, so a synthetic one stands out


class DryRunWrites(AgentMiddleware[Any, Context, Any]):
    """Answer every write tool with a synthetic result; read tools run for real."""

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(FIRST_SYNTHETIC_ID)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        call = request.tool_call
        if call["name"] not in WRITE_TOOLS:
            return await handler(request)
        if call["name"] == CREATE_BRANCH:
            context = request.runtime.context
            body: dict[str, Any] = {
                "dashboard_id": call["args"].get("dashboard_id"),
                "id": next(self._ids),
                "name": call["args"].get("name"),
                "created_by": context.username if isinstance(context, Context) else None,
            }
            return ToolMessage(content=json.dumps(body), name=call["name"], tool_call_id=call["id"])
        refusal = {"code": Code.NOT_EXECUTED, "message": "Not executed: this is an evaluation run."}
        return ToolMessage(
            content=json.dumps({"error": refusal}),
            name=call["name"],
            tool_call_id=call["id"],
            status="error",
        )
