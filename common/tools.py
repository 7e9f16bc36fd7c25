"""The tool catalogue both processes and the browser share: each of the agent's tools with its
name, argument schema (common/tool_arguments.py), card labels and confirmation.

Names and arguments are fixed by CONTRACT.md ("Tools"). Light (Pydantic, no LangChain): the
agent builds its tools over it (agent/tools/registry.py pairs each entry with its builder), the
backend derives its workflow steps' tools and arguments from it (backend/workflows/definition.py),
the MCP listing shows the built tools' schemas, and the browser's list and card labels are
generated from it (frontend/scripts/gen_codes.py -> frontend/src/lib/codes.ts).

Adding a tool: its argument model in common/tool_arguments.py and its `ToolInfo` here, its
builder in its agent domain module (`@tool(names.X, args_schema=...)`) and in
`agent/tools/registry.BUILDERS`, then `make api-types`. Every place forgotten fails a test.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from common import tool_arguments as args

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
    """What both processes and the browser know about a tool without building it."""

    name: str
    arguments: type[BaseModel]
    """The schema of its arguments (agent/tools/calls.py `check_arguments` checks a call by it)."""
    title: str
    """The card's title while it runs (the stream's `tool_start.title`; the browser's too)."""
    settled: str
    """The card's title once the call returned or failed (the browser's)."""
    title_ru: str
    settled_ru: str
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
    ToolInfo(
        SEARCH_DASHBOARDS,
        args.SearchDashboardsArgs,
        "Searching dashboards",
        "Dashboard search",
        "Ищу дашборды",
        "Поиск дашбордов",
    ),
    ToolInfo(
        GET_DASHBOARD,
        args.DashboardArgs,
        "Reading the dashboard",
        "Dashboard details",
        "Читаю дашборд",
        "Сведения о дашборде",  # noqa: RUF001
    ),
    ToolInfo(
        DASHBOARD_HEALTH,
        args.DashboardArgs,
        "Checking dashboard health",
        "Dashboard health",
        "Проверяю состояние дашборда",
        "Состояние дашборда",
    ),
    ToolInfo(
        CREATE_BRANCH,
        args.CreateBranchArgs,
        "Creating a branch",
        "New branch",
        "Создаю ветку",
        "Новая ветка",
        writes=True,
        role="editor",
    ),
    ToolInfo(
        COMMIT_CHANGES,
        args.CommitChangesArgs,
        "Committing changes",
        "Commit",
        "Фиксирую изменения",
        "Коммит",
        confirm="Commit {change_count} change(s) to branch {branch_id}: {message}",
        writes=True,
        role="editor",
        confirm_ru="Записать изменения ({change_count}) в ветку {branch_id}: {message}",
    ),
    ToolInfo(
        DEPLOY_DASHBOARD,
        args.DeployDashboardArgs,
        "Deploying the dashboard",
        "Deployment",
        "Развёртываю дашборд",
        "Развёртывание",
        confirm="Deploy dashboard {dashboard_id} ({ref}) to {environment}",
        writes=True,
        role="admin",
        confirm_ru="Развернуть дашборд {dashboard_id} ({ref}) в {environment}",
    ),
    ToolInfo(
        LIST_TABLES,
        args.ListTablesArgs,
        "Listing tables",
        "Tables",
        "Получаю список таблиц",
        "Таблицы",
    ),
    ToolInfo(
        GET_TABLE_SCHEMA,
        args.TableSchemaArgs,
        "Reading the table schema",
        "Table schema",
        "Читаю схему таблицы",
        "Схема таблицы",
    ),
    ToolInfo(
        EXECUTE_SQL,
        args.ExecuteSqlArgs,
        "Running a read-only query",
        "Read-only query",
        "Выполняю запрос на чтение",
        "Запрос на чтение",
    ),
    ToolInfo(
        EXECUTE_MIGRATION,
        args.ExecuteMigrationArgs,
        "Applying the migration",
        "Migration",
        "Применяю миграцию",
        "Миграция",
        confirm="Apply migration {migration_id} to datasource {datasource}",
        writes=True,
        role="admin",
        confirm_ru="Применить миграцию {migration_id} к источнику данных {datasource}",
    ),
    ToolInfo(
        LIST_FILES,
        args.ListFilesArgs,
        "Listing files",
        "Files",
        "Получаю список файлов",
        "Файлы",
    ),
    ToolInfo(
        READ_FILE,
        args.ReadFileArgs,
        "Reading a file",
        "File contents",
        "Читаю файл",
        "Содержимое файла",
    ),
    ToolInfo(
        LOOKUP_KNOWLEDGE,
        args.LookupKnowledgeArgs,
        "Searching the knowledge base",
        "Knowledge base",
        "Ищу в базе знаний",
        "База знаний",
    ),
    ToolInfo(
        QUERY_LOGS,
        args.QueryLogsArgs,
        "Searching the logs",
        "Logs",
        "Ищу в журналах",
        "Журналы",
    ),
)

TOOLS: Mapping[str, ToolInfo] = {info.name: info for info in CATALOGUE}
TOOL_NAMES: tuple[str, ...] = tuple(TOOLS)
TITLES: Mapping[str, str] = {info.name: info.title for info in CATALOGUE}
# Tools that pause for a person's confirmation, with the line the confirmation card shows.
CONFIRM_TOOLS: Mapping[str, str] = {
    info.name: info.confirm for info in CATALOGUE if info.confirm is not None
}
WRITE_TOOLS: frozenset[str] = frozenset(info.name for info in CATALOGUE if info.writes)
# Each tool's argument names, as the backend checks a workflow file's step against them.
ARGUMENT_NAMES: Mapping[str, frozenset[str]] = {
    info.name: frozenset(info.arguments.model_fields) for info in CATALOGUE
}
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
