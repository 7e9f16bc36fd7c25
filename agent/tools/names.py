"""The agent's view of the tool catalogue (common/tools.py): names, titles, confirmations.

The catalogue lives on the ground floor so that the backend (workflow steps) and the browser
(generated list and labels) derive from the same entries; agent modules import it from here.
"""

from __future__ import annotations

from common.tools import (
    CATALOGUE,
    COMMIT_CHANGES,
    CONFIRM_TOOLS,
    CREATE_BRANCH,
    DASHBOARD_HEALTH,
    DEPLOY_DASHBOARD,
    DIAGNOSIS_TOOLS,
    EXECUTE_MIGRATION,
    EXECUTE_SQL,
    GET_DASHBOARD,
    GET_TABLE_SCHEMA,
    LIST_FILES,
    LIST_TABLES,
    LOOKUP_KNOWLEDGE,
    QUERY_LOGS,
    READ_FILE,
    SEARCH_DASHBOARDS,
    TITLES,
    TOOL_NAMES,
    TOOLS,
    WRITE_TOOLS,
    ToolInfo,
    describe_call,
    reaches,
    title,
)

__all__ = [
    "CATALOGUE",
    "COMMIT_CHANGES",
    "CONFIRM_TOOLS",
    "CREATE_BRANCH",
    "DASHBOARD_HEALTH",
    "DEPLOY_DASHBOARD",
    "DIAGNOSIS_TOOLS",
    "EXECUTE_MIGRATION",
    "EXECUTE_SQL",
    "GET_DASHBOARD",
    "GET_TABLE_SCHEMA",
    "LIST_FILES",
    "LIST_TABLES",
    "LOOKUP_KNOWLEDGE",
    "QUERY_LOGS",
    "READ_FILE",
    "SEARCH_DASHBOARDS",
    "TITLES",
    "TOOLS",
    "TOOL_NAMES",
    "WRITE_TOOLS",
    "ToolInfo",
    "describe_call",
    "reaches",
    "title",
]
