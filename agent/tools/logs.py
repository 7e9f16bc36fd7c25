"""Operational log tool: what the platform's own operations did (validation, deploys, SQL)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langchain.tools import BaseTool, tool

from agent.backend_client import BackendClient
from agent.tools import names
from agent.tools.runtime import AgentRuntime, user_context
from agent.tools.shaping import MAX_ROWS, cap_list
from common.tool_arguments import QueryLogsArgs


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
