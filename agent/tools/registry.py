"""The tool registry: every tool of the catalogue (common/tools.py) with the function that builds
it over one BackendClient, over the catalogue's argument schema. What the agent offers,
confirms, titles and evaluates comes from here and from the catalogue; nothing else lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from langchain.tools import BaseTool

from agent.backend_client import BackendClient
from agent.tools import dashboards, datasources, knowledge, logs, names, storage
from agent.tools.names import CATALOGUE, ToolInfo

Builder = Callable[[BackendClient], BaseTool]

BUILDERS: Mapping[str, Builder] = {
    names.SEARCH_DASHBOARDS: dashboards.build_search_dashboards,
    names.GET_DASHBOARD: dashboards.build_get_dashboard,
    names.DASHBOARD_HEALTH: dashboards.build_dashboard_health,
    names.CREATE_BRANCH: dashboards.build_create_branch,
    names.COMMIT_CHANGES: dashboards.build_commit_changes,
    names.DEPLOY_DASHBOARD: dashboards.build_deploy_dashboard,
    names.LIST_TABLES: datasources.build_list_tables,
    names.GET_TABLE_SCHEMA: datasources.build_get_table_schema,
    names.EXECUTE_SQL: datasources.build_execute_sql,
    names.EXECUTE_MIGRATION: datasources.build_execute_migration,
    names.LIST_FILES: storage.build_list_files,
    names.READ_FILE: storage.build_read_file,
    names.LOOKUP_KNOWLEDGE: knowledge.build_lookup_knowledge,
    names.QUERY_LOGS: logs.build_query_logs,
}


class RegistryError(RuntimeError):
    """The catalogue and the builders disagree: a tool was added in one place only."""


@dataclass(frozen=True)
class RegisteredTool:
    info: ToolInfo
    build: Builder


def _registry() -> tuple[RegisteredTool, ...]:
    missing = [info.name for info in CATALOGUE if info.name not in BUILDERS]
    unlisted = sorted(set(BUILDERS) - {info.name for info in CATALOGUE})
    if missing or unlisted:
        raise RegistryError(f"no builder for {missing}; not in the catalogue: {unlisted}")
    return tuple(RegisteredTool(info, BUILDERS[info.name]) for info in CATALOGUE)


REGISTRY: tuple[RegisteredTool, ...] = _registry()


def build_tools(client: BackendClient, only: Iterable[str] | None = None) -> list[BaseTool]:
    """Every agent tool (or those named in `only`), in the catalogue's order, calling the
    backend through `client`. A builder whose tool has another name is a RegistryError."""
    wanted = None if only is None else set(only)
    tools = []
    for entry in REGISTRY:
        if wanted is not None and entry.info.name not in wanted:
            continue
        built = entry.build(client)
        if built.name != entry.info.name:
            raise RegistryError(f"the builder of {entry.info.name!r} built {built.name!r}")
        if built.args_schema is not entry.info.arguments:
            raise RegistryError(f"{entry.info.name!r} is not built over the catalogue's arguments")
        tools.append(built)
    return tools


__all__ = ["BUILDERS", "REGISTRY", "RegistryError", "build_tools"]
