"""Which external MCP tools there are: the backend's list of servers (their tools as last
listed, their headers sealed), asked at most every `agent.mcp_refresh_s` (10 s) by this
process, so a turn that uses no external tool costs nothing more than a look at memory. The
header values are opened here and held only in memory, never in a Context, a state, a
checkpoint or a log."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent.backend_client import UNANSWERED, BackendClient, BackendError
from agent.context import Context
from agent.tools.names import reaches
from common import mcp_confirm
from common.sealed import SealError, unseal

log = logging.getLogger(__name__)

SEPARATOR = "__"  # `<server name>__<tool name>`, as the model sees it
# OpenAI's chat API refuses a function description over 1024 characters (parameter
# descriptions have no such limit); `agent.tool_description_chars` changes it per provider.
DESCRIPTION_CHARS = 1024
CONTINUED = " (whole description: the parameters' description)"


@dataclass(frozen=True)
class ServerRules:
    """What decides whether a call of one server's tool asks first (common/mcp_confirm): the
    server's whole listing (a proxy's target is looked up there) and the admin's lists."""

    listing: Mapping[str, Mapping[str, Any]]
    confirm_tools: frozenset[str]
    enabled_tools: frozenset[str] | None


@dataclass(frozen=True)
class ExternalTool:
    """One tool of one server, as offered to the model."""

    server: str
    tool: str
    description: str
    input_schema: dict[str, Any]
    url: str
    min_role: str
    rules: ServerRules = field(repr=False)
    headers: Mapping[str, str] = field(repr=False)  # opened secrets: memory only
    # spec() and its size by description limit: built once per listing, not per model call
    _built: dict[int, tuple[dict[str, Any], int]] = field(
        default_factory=dict, repr=False, compare=False, hash=False
    )

    @property
    def name(self) -> str:
        return f"{self.server}{SEPARATOR}{self.tool}"

    def confirm_reason(self, arguments: Mapping[str, Any]) -> mcp_confirm.Reason:
        """Why this call asks first, or `read_only` when it runs at once."""
        return mcp_confirm.call_reason(
            self.rules.listing[self.tool],
            arguments,
            self.rules.listing,
            self.rules.confirm_tools,
            self.rules.enabled_tools,
        )

    def spec(self, description_chars: int = DESCRIPTION_CHARS) -> dict[str, Any]:
        """The tool in the provider's format (what the model is bound with). A description
        longer than the provider takes (`description_chars`) is not lost: the whole text also
        goes into the parameters' schema, which has no such limit."""
        return self._build(description_chars)[0]

    def spec_chars(self, description_chars: int = DESCRIPTION_CHARS) -> int:
        """Characters spec() adds to a model request."""
        return self._build(description_chars)[1]

    def _build(self, description_chars: int) -> tuple[dict[str, Any], int]:
        if description_chars not in self._built:
            spec = self._spec(description_chars)
            self._built[description_chars] = (spec, len(json.dumps(spec, ensure_ascii=False)))
        return self._built[description_chars]

    def _spec(self, description_chars: int) -> dict[str, Any]:
        schema = dict(self.input_schema or {"type": "object", "properties": {}})
        text = f"[external: {self.server}] {self.description}"
        if len(text) > description_chars:
            schema["description"] = self.description
            text = text[: description_chars - len(CONTINUED)].rstrip() + CONTINUED
        return {
            "type": "function",
            "function": {"name": self.name, "description": text, "parameters": schema},
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

    def needs_confirm(self, name: str, arguments: Mapping[str, Any]) -> bool:
        """Whether this call pauses for the confirmation card; an unknown tool does (fail
        closed: nothing external runs unconfirmed because a listing went missing)."""
        tool = self.get(name)
        if tool is None:
            return True
        return mcp_confirm.asks_first(tool.confirm_reason(arguments))

    async def refresh(self, context: Context) -> None:
        """The backend's list, asked again when older than `agent.mcp_refresh_s`."""
        await self._refresh(context)

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
            listed = [t for t in server.get("tools") or [] if isinstance(t.get("name"), str)]
            rules = ServerRules(
                listing={t["name"]: t for t in listed},
                confirm_tools=frozenset(server.get("confirm_tools") or []),
                enabled_tools=None if enabled is None else frozenset(enabled),
            )
            for one in listed:
                if enabled is not None and one["name"] not in enabled:
                    continue
                tool = ExternalTool(
                    server=server["name"],
                    tool=one["name"],
                    description=one.get("description") or "",
                    input_schema=one.get("input_schema") or {},
                    url=server["url"],
                    min_role=server.get("min_role") or "admin",
                    rules=rules,
                    headers=headers,
                )
                yield tool.name, tool
