"""Datasource tools: tables, column schemas, read-only SQL, and applying migrations."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain.tools import BaseTool, tool

from agent.backend_client import BackendClient, BackendError
from agent.context import Context
from agent.tools import names
from agent.tools.runtime import AgentRuntime, user_context
from agent.tools.shaping import MAX_ITEMS, MAX_ROWS, cap_cell, cap_list, pick
from common.tool_arguments import (
    ExecuteMigrationArgs,
    ExecuteSqlArgs,
    ListTablesArgs,
    TableSchemaArgs,
)


def build_list_tables(client: BackendClient) -> BaseTool:
    @tool(names.LIST_TABLES, args_schema=ListTablesArgs)
    async def list_tables(runtime: AgentRuntime, datasource: str | None = None) -> dict[str, Any]:
        """List the tables of a datasource, or every datasource with its tables when none is
        named. No confirmation needed."""
        context = user_context(runtime)
        if datasource is not None:
            body = await client.call(context, "GET", f"/api/datasources/{datasource}/tables")
            return {"datasource": datasource, **cap_list(body, "items", limit=100)}
        listed = await client.call(context, "GET", "/api/datasources")
        sources = listed.get("items", [])[:MAX_ITEMS]
        found = await asyncio.gather(
            *(_table_names(client, context, str(s["name"])) for s in sources),
            return_exceptions=True,
        )
        return {"datasources": [_with_tables(s, t) for s, t in zip(sources, found, strict=True)]}

    return list_tables


async def _table_names(client: BackendClient, context: Context, datasource: str) -> list[str]:
    body = await client.call(context, "GET", f"/api/datasources/{datasource}/tables")
    return [str(t.get("name")) for t in body.get("items", [])]


def _with_tables(source: dict[str, Any], tables: list[str] | BaseException) -> dict[str, Any]:
    shown = pick(source, "name", "dialect", "description")
    if isinstance(tables, BackendError):
        return {**shown, "error": {"code": tables.code, "message": tables.message}}
    if isinstance(tables, BaseException):
        raise tables
    return {**shown, "tables": tables[:100]}


def build_get_table_schema(client: BackendClient) -> BaseTool:
    @tool(names.GET_TABLE_SCHEMA, args_schema=TableSchemaArgs)
    async def get_table_schema(table_ref: str, runtime: AgentRuntime) -> dict[str, Any]:
        """Show a table's columns (name, type, nullable) given 'datasource.table'.
        No confirmation needed."""
        datasource, table = table_ref.split(".", 1)
        path = f"/api/datasources/{datasource}/tables/{table}/columns"
        body = await client.call(user_context(runtime), "GET", path)
        return {"datasource": datasource, "table": table, **cap_list(body, "items", limit=200)}

    return get_table_schema


def build_execute_sql(client: BackendClient) -> BaseTool:
    @tool(names.EXECUTE_SQL, args_schema=ExecuteSqlArgs)
    async def execute_sql(datasource: str, query: str, runtime: AgentRuntime) -> dict[str, Any]:
        """Run one read-only SELECT on a datasource and return its columns and first rows
        (at most 50; long values shortened). Anything but a single SELECT is refused.
        No confirmation needed."""
        path = f"/api/datasources/{datasource}/query"
        payload = {"sql": query, "limit": MAX_ROWS}
        body = await client.call(user_context(runtime), "POST", path, json=payload)
        rows = [[cap_cell(v) for v in row] for row in body.get("rows", [])[:MAX_ROWS]]
        result = {
            **pick(body, "columns", "row_count", "truncated", "elapsed_ms"),
            "rows": rows,
        }
        if body.get("truncated"):
            result["note"] = f"only the first {len(rows)} rows are shown"
        return result

    return execute_sql


def build_execute_migration(client: BackendClient) -> BaseTool:
    @tool(names.EXECUTE_MIGRATION, args_schema=ExecuteMigrationArgs)
    async def execute_migration(
        datasource: str, migration_id: str, runtime: AgentRuntime
    ) -> dict[str, Any]:
        """Apply a pending schema migration to a datasource. Needs the admin role.
        A person must confirm it before it runs."""
        path = f"/api/datasources/{datasource}/migrations/{migration_id}/apply"
        body = await client.call(user_context(runtime), "POST", path)
        return body if isinstance(body, dict) else {"applied": migration_id}

    return execute_migration
