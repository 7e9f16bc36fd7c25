"""What every tool needs from its run: the signed-in user's Context, never from state or config."""

from __future__ import annotations

from typing import Any

from langchain.tools import ToolRuntime

from agent.backend_client import BackendError
from agent.context import Context
from agent.errors import Code

AgentRuntime = ToolRuntime[Context, Any]


def user_context(runtime: AgentRuntime) -> Context:
    """The run's Context; a run without one has no user to act for, so nothing is called."""
    context = runtime.context
    if not isinstance(context, Context):
        raise BackendError(401, Code.UNAUTHORIZED, "No signed-in user for this run")
    return context
