"""Operational log tool: what the platform's own operations did (validation, deploys, SQL)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from langchain.tools import BaseTool, tool
from pydantic import BaseModel, Field, field_validator, model_validator

from agent.backend_client import BackendClient
from agent.tools import names
from agent.tools.runtime import AgentRuntime, user_context
from agent.tools.shaping import MAX_ROWS, cap_list


class QueryLogsArgs(BaseModel):
    query: str | None = Field(
        default=None,
        max_length=200,
        description='Words to search for; "exact phrase", or, -excluded work',
    )
    level: Literal["debug", "info", "warning", "error"] | None = Field(
        default=None, description="Minimum severity: warning returns warnings and errors"
    )
    since: datetime | None = Field(
        default=None, description="ISO 8601 start, e.g. 2026-11-29T08:00:00Z"
    )
    until: datetime | None = Field(default=None, description="ISO 8601 end")
    dashboard_id: int | None = Field(
        default=None, ge=1, le=2_147_483_647, description="Only this dashboard's"
    )

    @field_validator("since", "until")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        """A time without a zone is read as UTC."""
        return value.replace(tzinfo=UTC) if value and value.tzinfo is None else value

    @model_validator(mode="after")
    def _ordered(self) -> QueryLogsArgs:
        if self.since and self.until and self.since > self.until:
            raise ValueError("since must not be after until")
        return self


def build_query_logs(client: BackendClient) -> BaseTool:
    @tool(names.QUERY_LOGS, args_schema=QueryLogsArgs)
    async def query_logs(
        runtime: AgentRuntime,
        query: str | None = None,
        level: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        dashboard_id: int | None = None,
    ) -> dict[str, Any]:
        """Search operational logs (validation runs, deployments, SQL, migrations), newest
        first, by words, level, time range and dashboard. No confirmation needed."""
        params = {
            "query": query,
            "level": level,
            "since": since.isoformat() if since else None,
            "until": until.isoformat() if until else None,
            "dashboard_id": dashboard_id,
            "limit": MAX_ROWS,
        }
        body = await client.call(user_context(runtime), "GET", "/api/logs", params=params)
        return cap_list(body, "items", limit=MAX_ROWS)

    return query_logs
