"""The hook of external MCP tools into the agent (dynamic mode only): each model call is also
offered the tools the run's user may use, a call of one runs through the agent's own tool node
(a tool card like any tool), those marked `confirm_tools` pause for the confirmation card
(ConfirmRules), and every call is audited."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    InterruptOnConfig,
    ModelRequest,
    ModelResponse,
)
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from agent.backend_client import UNANSWERED, BackendClient, BackendError
from agent.context import Context
from agent.errors import Code
from agent.external.calls import as_tool
from agent.external.servers import ExternalServers
from agent.tools.names import reaches


class ExternalTools(AgentMiddleware[Any, Context, Any]):
    """Offer and run the external MCP tools of the run's user."""

    def __init__(self, servers: ExternalServers, client: BackendClient, timeout_s: float) -> None:
        super().__init__()
        self.servers = servers
        self.client = client
        self.timeout_s = timeout_s

    async def awrap_model_call(
        self,
        request: ModelRequest[Context],
        handler: Callable[[ModelRequest[Context]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        context = request.runtime.context
        if not isinstance(context, Context) or not context.offer_tools or not request.tools:
            return await handler(request)
        offered = await self.servers.offered(context)
        if not offered:
            return await handler(request)
        return await handler(request.override(tools=[*request.tools, *(t.spec() for t in offered)]))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        if request.tool is not None:
            return await handler(request)
        external = self.servers.get(request.tool_call["name"])
        context = request.runtime.context
        if (
            external is None
            or not isinstance(context, Context)
            or not reaches(context.roles, external.min_role)
        ):
            return await handler(request)  # not ours to run: an unknown tool
        started = time.monotonic()
        result = await handler(request.override(tool=as_tool(external, self.timeout_s)))
        await self._audit(context, request, result, started)
        return result

    async def _audit(
        self, context: Context, request: ToolCallRequest, result: Any, started: float
    ) -> None:
        failed = isinstance(result, ToolMessage) and result.status == "error"
        code = None
        if failed:
            try:
                code = json.loads(str(result.content))["error"]["code"]
            except (ValueError, KeyError, TypeError):
                code = Code.TOOL_ERROR
        record = {
            "tool": request.tool_call["name"][:100],
            "call_id": str(request.tool_call.get("id") or "")[:64] or "unknown",
            "outcome": "failure" if failed else "success",
            "code": code,
            "arguments": request.tool_call.get("args") or {},
            "duration_ms": int((time.monotonic() - started) * 1000),
        }
        try:
            await self.client.call(context, "POST", "/api/agent/tool-calls", json=record)
        except (BackendError, *UNANSWERED):
            pass  # the call was answered; a lost audit row must not break the run


class ConfirmRules(dict[str, InterruptOnConfig]):
    """The confirmation rules of HumanInTheLoopMiddleware (`interrupt_on`), which also answer
    for the external tools an admin marked in `confirm_tools`: the same card, the same
    `call_id` binding as `deploy_dashboard`."""

    def __init__(
        self,
        rules: Mapping[str, InterruptOnConfig],
        servers: ExternalServers,
        describe: Callable[..., str],
    ) -> None:
        super().__init__(rules)
        self.servers = servers
        self.external = InterruptOnConfig(
            allowed_decisions=["approve", "reject"], description=describe
        )

    def get(self, name: str, default: Any = None) -> Any:
        found = super().get(name)
        if found is None and self.servers.needs_confirm(name):
            return self.external
        return found if found is not None else default

    def __getitem__(self, name: str) -> InterruptOnConfig:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None
