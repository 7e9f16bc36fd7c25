"""The agent's tools as data: the one place a tool's name, card title and confirmation are said.

Names and arguments are fixed by CONTRACT.md ("Tools"). This module is light (no LangChain):
the evaluation's case file, the frontend's generated list (frontend/scripts/gen_codes.py) and
the backend's workflow lists are checked against it without building anything.
`agent.tools.registry` pairs each entry with its builder; a test pins everything else to it
(the backend's workflow lists, both frontend dictionaries, the contract test table).

Adding a tool: its builder in its domain module (`@tool(names.X, ...)`), one constant and one
`ToolInfo` here, its builder in `registry.BUILDERS`, its two headings in each frontend
dictionary, then `make api-types`. Every place forgotten fails a test.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

SEARCH_DASHBOARDS = "search_dashboards"
GET_DASHBOARD = "get_dashboard"
DASHBOARD_HEALTH = "dashboard_health"
CREATE_BRANCH = "create_branch"
COMMIT_CHANGES = "commit_changes"
DEPLOY_DASHBOARD = "deploy_dashboard"
LIST_TABLES = "list_tables"
GET_TABLE_SCHEMA = "get_table_schema"
EXECUTE_SQL = "execute_sql"
EXECUTE_MIGRATION = "execute_migration"
LIST_FILES = "list_files"
READ_FILE = "read_file"
LOOKUP_KNOWLEDGE = "lookup_knowledge"
QUERY_LOGS = "query_logs"


@dataclass(frozen=True)
class ToolInfo:
    """What the rest of the agent knows about a tool without building it."""

    name: str
    title: str
    """The card's title while it runs (the stream's `tool_start.title`)."""
    confirm: str | None = None
    """The confirmation card's line (formatted with the call's arguments, see `describe_call`);
    None: the tool runs without asking a person."""
    writes: bool = False
    """It changes the platform: an evaluation answers it with a synthetic result, never runs it."""
    role: str = "viewer"
    """The lowest role that may run it (CONTRACT.md, "Tools"); the backend decides each call,
    this says which tools a caller is offered where a list is shown (the MCP server)."""
    confirm_ru: str | None = None
    """`confirm` in Russian, for a person whose page is in Russian (agent/language.py)."""


# In the order the tools are built and offered to the model.
CATALOGUE: tuple[ToolInfo, ...] = (
    ToolInfo(SEARCH_DASHBOARDS, "Searching dashboards"),
    ToolInfo(GET_DASHBOARD, "Reading the dashboard"),
    ToolInfo(DASHBOARD_HEALTH, "Checking dashboard health"),
    ToolInfo(CREATE_BRANCH, "Creating a branch", writes=True, role="editor"),
    ToolInfo(
        COMMIT_CHANGES,
        "Committing changes",
        confirm="Commit {change_count} change(s) to branch {branch_id}: {message}",
        writes=True,
        role="editor",
        confirm_ru="Записать изменения ({change_count}) в ветку {branch_id}: {message}",
    ),
    ToolInfo(
        DEPLOY_DASHBOARD,
        "Deploying the dashboard",
        confirm="Deploy dashboard {dashboard_id} ({ref}) to {environment}",
        writes=True,
        role="admin",
        confirm_ru="Развернуть дашборд {dashboard_id} ({ref}) в {environment}",
    ),
    ToolInfo(LIST_TABLES, "Listing tables"),
    ToolInfo(GET_TABLE_SCHEMA, "Reading the table schema"),
    ToolInfo(EXECUTE_SQL, "Running a read-only query"),
    ToolInfo(
        EXECUTE_MIGRATION,
        "Applying the migration",
        confirm="Apply migration {migration_id} to datasource {datasource}",
        writes=True,
        role="admin",
        confirm_ru="Применить миграцию {migration_id} к источнику данных {datasource}",
    ),
    ToolInfo(LIST_FILES, "Listing files"),
    ToolInfo(READ_FILE, "Reading a file"),
    ToolInfo(LOOKUP_KNOWLEDGE, "Searching the knowledge base"),
    ToolInfo(QUERY_LOGS, "Searching the logs"),
)

TOOLS: Mapping[str, ToolInfo] = {info.name: info for info in CATALOGUE}
TOOL_NAMES: tuple[str, ...] = tuple(TOOLS)
TITLES: Mapping[str, str] = {info.name: info.title for info in CATALOGUE}
# Tools that pause for a person's confirmation, with the line the confirmation card shows.
CONFIRM_TOOLS: Mapping[str, str] = {
    info.name: info.confirm for info in CATALOGUE if info.confirm is not None
}
WRITE_TOOLS: frozenset[str] = frozenset(info.name for info in CATALOGUE if info.writes)
# The tools of a diagnosis run (CONTRACT.md, "Diagnosis"), in the order its prompt names them.
DIAGNOSIS_TOOLS: tuple[str, ...] = (LOOKUP_KNOWLEDGE, QUERY_LOGS, EXECUTE_SQL)


RANK: Mapping[str, int] = {"viewer": 1, "editor": 2, "admin": 3}  # each role implies those below


def reaches(roles: Iterable[str], role: str) -> bool:
    """Whether any of `roles` is `role` or above (CONTRACT.md, "Identity")."""
    return max((RANK.get(r, 0) for r in roles), default=0) >= RANK.get(role, 99)


def title(name: str) -> str:
    """The card's title of tool `name`; an unknown tool's name itself."""
    info = TOOLS.get(name)
    return info.title if info else name


def describe_call(name: str, args: Mapping[str, Any], lang: str = "en") -> str:
    """The confirmation card's line for a call of a CONFIRM_TOOLS tool in `lang` ("en" or
    "ru"); missing args show as '?'."""
    info = TOOLS.get(name)
    template = CONFIRM_TOOLS.get(name)
    if lang == "ru" and info is not None and info.confirm_ru:
        template = info.confirm_ru
    if template is None:
        return f"Выполнить {name}" if lang == "ru" else f"Run {name}"
    values: dict[str, Any] = {"change_count": len(args.get("changes") or [])}
    values.update(args)
    return template.format_map(_Lenient(values))


class _Lenient(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"
