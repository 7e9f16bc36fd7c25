"""Bodies of external MCP servers (admin) and of the agent's tool-call audit records."""

from __future__ import annotations

import json
import re
import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from backend.identity.roles import Role
from common.mcp_confirm import Reason

MAX_ARGUMENT_CHARS = 4000


class ToolCallRecord(BaseModel):
    tool: str = Field(min_length=1, max_length=100)
    call_id: str = Field(min_length=1, max_length=64)
    outcome: Literal["success", "failure"]
    code: str | None = Field(default=None, max_length=64)
    arguments: dict[str, Any] = Field(default_factory=dict)
    duration_ms: int | None = Field(default=None, ge=0)

    @field_validator("arguments")
    @classmethod
    def _bounded(cls, value: dict[str, Any]) -> dict[str, Any]:
        if len(json.dumps(value, default=str)) > MAX_ARGUMENT_CHARS:
            return {"truncated": True}
        return value


NAME_PATTERN = r"^[a-z][a-z0-9_]{1,30}$"
HEADER_NAME = r"^[A-Za-z0-9-]{1,128}$"
ToolName = Annotated[str, Field(min_length=1, max_length=128)]


def _checked_headers(value: dict[str, str] | None) -> dict[str, str] | None:
    for name, secret in (value or {}).items():
        if not re.fullmatch(HEADER_NAME, name) or len(secret) > 8192:
            raise ValueError("header names are letters, digits and '-'; values up to 8192 chars")
    return value


class McpServerCreate(BaseModel):
    name: str = Field(pattern=NAME_PATTERN, description="Tools are offered as `<name>__<tool>`")
    url: str = Field(min_length=8, max_length=2048, pattern=r"^https?://")
    headers: dict[str, str] | None = Field(
        default=None, description="Sent with every request to the server; stored encrypted"
    )
    enabled_tools: list[ToolName] | None = Field(default=None, max_length=200)
    confirm_tools: list[ToolName] = Field(default_factory=list, max_length=200)
    min_role: Role = Role.admin

    @field_validator("headers")
    @classmethod
    def _header_names(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return _checked_headers(value)


class McpServerUpdate(BaseModel):
    url: str | None = Field(default=None, min_length=8, max_length=2048, pattern=r"^https?://")
    headers: dict[str, str] | None = None
    enabled_tools: list[ToolName] | None = Field(default=None, max_length=200)
    confirm_tools: list[ToolName] | None = Field(default=None, max_length=200)
    min_role: Role | None = None

    @field_validator("headers")
    @classmethod
    def _header_names(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return _checked_headers(value)


class McpToolRead(BaseModel):
    name: str
    description: str = ""
    read_only: bool = Field(
        default=False, description="The server annotates it `readOnlyHint: true`"
    )
    confirm: bool = Field(
        default=True,
        description="Asks a person first (a proxy: unless the tool it names runs at once)",
    )
    confirm_reason: Reason = Field(
        default="not_read_only",
        description="read_only (runs at once), listed (in confirm_tools), not_read_only, proxy",
    )


class McpServerRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    name: str
    url: str
    header_names: list[str]
    enabled_tools: list[str] | None
    confirm_tools: list[str]
    min_role: str
    created_at: datetime


class McpServerStatus(McpServerRead):
    tools: list[McpToolRead]
    status: Literal["ok", "unreachable", "unknown"]


class McpServerPage(BaseModel):
    items: list[McpServerStatus]


class McpServerForAgent(BaseModel):
    """What the agent needs to offer and call a server's tools: its header values stay sealed
    (the agent opens them with the same environment key)."""

    name: str
    url: str
    headers_sealed: str | None
    enabled_tools: list[str] | None
    confirm_tools: list[str]
    min_role: str
    tools: list[dict[str, Any]]


class McpServerAgentPage(BaseModel):
    items: list[McpServerForAgent]
