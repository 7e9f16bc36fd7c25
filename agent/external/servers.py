"""Which external MCP tools there are: the backend's list of servers (their tools as last
listed, their headers sealed), asked at most every `agent.mcp_refresh_s` (10 s) by this
process, so a turn that uses no external tool costs nothing more than a look at memory. The
header values are opened here and held only in memory, never in a Context, a state, a
checkpoint or a log."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent.backend_client import UNANSWERED, BackendClient, BackendError
from agent.context import Context
from agent.tools.names import reaches
from common.sealed import SealError, unseal

log = logging.getLogger(__name__)

SEPARATOR = "__"  # `<server name>__<tool name>`, as the model sees it


@dataclass(frozen=True)
class ExternalTool:
    """One tool of one server, as offered to the model."""

    server: str
    tool: str
    description: str
    input_schema: dict[str, Any]
    url: str
    confirm: bool
    min_role: str
    headers: Mapping[str, str] = field(repr=False)  # opened secrets: memory only

    @property
    def name(self) -> str:
        return f"{self.server}{SEPARATOR}{self.tool}"

    def spec(self) -> dict[str, Any]:
        """The tool in the provider's format (what the model is bound with)."""
        schema = self.input_schema or {"type": "object", "properties": {}}
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": f"[external: {self.server}] {self.description}"[:1024],
                "parameters": schema,
            },
        }


class ExternalServers:
    """The process's view of the external MCP tools, refreshed from the backend."""

    def __init__(self, client: BackendClient, key: str, refresh_s: float = 10.0) -> None:
        self._client = client
        self._key = key
        self._refresh_s = refresh_s
        self._tools: dict[str, ExternalTool] = {}
        self._fetched_at = float("-inf")
        self._lock = asyncio.Lock()

    async def offered(self, context: Context) -> list[ExternalTool]:
        """The tools the run's user may be offered (their roles reach each server's min_role)."""
        await self._refresh(context)
        return [t for t in self._tools.values() if reaches(context.roles, t.min_role)]

    def get(self, name: str) -> ExternalTool | None:
        """The tool of that offered name, as last fetched (None for a built-in name)."""
        return self._tools.get(name) if SEPARATOR in name else None

    def needs_confirm(self, name: str) -> bool:
        tool = self.get(name)
        return tool is not None and tool.confirm

    async def _refresh(self, context: Context) -> None:
        if time.monotonic() - self._fetched_at < self._refresh_s:
            return
        async with self._lock:
            if time.monotonic() - self._fetched_at < self._refresh_s:
                return
            try:
                body = await self._client.request(
                    "GET", "/api/agent/mcp-servers", user_token=context.user_token, timeout=5.0
                )
            except (BackendError, *UNANSWERED) as exc:
                log.warning("external MCP servers not refreshed: %s", type(exc).__name__)
                self._fetched_at = time.monotonic()  # keep what we had; ask again later
                return
            self._tools = dict(self._parse(body.get("items", [])))
            self._fetched_at = time.monotonic()

    def _parse(self, servers: Iterable[dict[str, Any]]) -> Iterable[tuple[str, ExternalTool]]:
        for server in servers:
            try:
                headers = (
                    unseal(self._key, server["headers_sealed"])
                    if server.get("headers_sealed")
                    else {}
                )
            except SealError:
                log.warning(
                    "the headers of MCP server %s cannot be opened: skipped", server["name"]
                )
                continue
            enabled = server.get("enabled_tools")
            confirm = set(server.get("confirm_tools") or [])
            for listed in server.get("tools") or []:
                if enabled is not None and listed["name"] not in enabled:
                    continue
                tool = ExternalTool(
                    server=server["name"],
                    tool=listed["name"],
                    description=listed.get("description") or "",
                    input_schema=listed.get("input_schema") or {},
                    url=server["url"],
                    confirm=listed["name"] in confirm,
                    min_role=server.get("min_role") or "admin",
                    headers=headers,
                )
                yield tool.name, tool
