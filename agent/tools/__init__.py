"""The agent's tools (names and arguments fixed by CONTRACT.md), built over one BackendClient.

Each tool reads the user from its injected `runtime.context` (agent.context.Context), calls the
backend with the service JWT plus X-On-Behalf-Of, and returns a compact JSON-serialisable dict.
A BackendError (403, 404, 409...) propagates for the agent's middleware to turn into a safe
tool error; arguments are validated by each tool's Pydantic args_schema before any HTTP call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain.tools import BaseTool

from agent.backend_client import BackendClient
from agent.tools.dashboards import dashboard_tools
from agent.tools.datasources import datasource_tools
from agent.tools.knowledge import knowledge_tools
from agent.tools.logs import log_tools
from agent.tools.storage import storage_tools

# Tools that pause for a person's confirmation, with the line the confirmation card shows
# (formatted with the call's arguments; see `describe_call`).
CONFIRM_TOOLS: dict[str, str] = {
    "commit_changes": "Commit {change_count} change(s) to branch {branch_id}: {message}",
    "deploy_dashboard": "Deploy dashboard {dashboard_id} ({ref}) to {environment}",
    "execute_migration": "Apply migration {migration_id} to datasource {datasource}",
}


def build_tools(client: BackendClient) -> list[BaseTool]:
    """Every agent tool, in a stable order, calling the backend through `client`."""
    return [
        *dashboard_tools(client),
        *datasource_tools(client),
        *storage_tools(client),
        *knowledge_tools(client),
        *log_tools(client),
    ]


def describe_call(name: str, args: Mapping[str, Any]) -> str:
    """The confirmation card's line for a call of a CONFIRM_TOOLS tool; missing args show as '?'."""
    template = CONFIRM_TOOLS.get(name)
    if template is None:
        return f"Run {name}"
    values: dict[str, Any] = {"change_count": len(args.get("changes") or [])}
    values.update(args)
    return template.format_map(_Lenient(values))


class _Lenient(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"


__all__ = ["CONFIRM_TOOLS", "build_tools", "describe_call"]
