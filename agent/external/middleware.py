"""The hook of external MCP tools into the agent (dynamic mode only): each model call is also
offered the tools the run's user may use (all of them within `agent.external_tools_budget_chars`,
past it `find_tools` and the tools found: agent/external/search.py), a call of one runs through
the agent's own tool node (a tool card like any tool), every call that is not of a read-only
tool pauses for the confirmation card (ConfirmRules, common/mcp_confirm.py), and every call is
audited."""

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
from agent.external import search
from agent.external.calls import as_tool
from agent.external.servers import DESCRIPTION_CHARS, ExternalServers, ExternalTool
from agent.tools.names import reaches


class ExternalTools(AgentMiddleware[Any, Context, Any]):
    """Offer and run the external MCP tools of the run's user."""

    def __init__(
        self,
        servers: ExternalServers,
        client: BackendClient,
        timeout_s: float,
        *,
        budget_chars: int = 12_000,
        description_chars: int = DESCRIPTION_CHARS,
    ) -> None:
        super().__init__()
        self.servers = servers
        self.client = client
        self.timeout_s = timeout_s
        self.budget_chars = budget_chars
        self.description_chars = description_chars

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
        specs = self._specs(offered, request.messages)
        return await handler(request.override(tools=[*request.tools, *specs]))

    def _specs(self, offered: list[ExternalTool], messages: Any) -> list[dict[str, Any]]:
        """Every offered tool within the budget; past it find_tools and the tools found."""
        if sum(t.spec_chars(self.description_chars) for t in offered) <= self.budget_chars:
            return [t.spec(self.description_chars) for t in offered]
        by_name = {t.name: t for t in offered}
        found = [by_name[n] for n in search.found_names(messages) if n in by_name]
        return [search.SPEC, *(t.spec(self.description_chars) for t in found)]

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        if request.tool is not None:
            return await handler(request)
        context = request.runtime.context
        if isinstance(context, Context):
            await self.servers.refresh(context)  # a resumed run may not have asked yet
            if request.tool_call["name"] == search.FIND_TOOLS and context.offer_tools:
                found = search.as_tool(await self.servers.offered(context))
                return await handler(request.override(tool=found))
        external = self.servers.get(request.tool_call["name"])
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
    for every external tool: a call pauses (the same card, the same `call_id` binding as
    `deploy_dashboard`) unless the rule of common/mcp_confirm.py lets it run at once, decided
    per call (`when`: a proxy's call by the tool it names)."""

    def __init__(
        self,
        rules: Mapping[str, InterruptOnConfig],
        servers: ExternalServers,
        describe: Callable[..., str],
    ) -> None:
        super().__init__(rules)
        self.servers = servers
        self.external = InterruptOnConfig(
            allowed_decisions=["approve", "reject"], description=describe, when=self._asks
        )

    def _asks(self, request: ToolCallRequest) -> bool:
        call = request.tool_call
        return self.servers.needs_confirm(call["name"], call.get("args") or {})

    def get(self, name: str, default: Any = None) -> Any:
        found = super().get(name)
        if found is None and self.servers.get(name) is not None:
            return self.external
        return found if found is not None else default

    def __getitem__(self, name: str) -> InterruptOnConfig:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None
