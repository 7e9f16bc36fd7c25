"""Tables and columns of a datasource, read through SQLAlchemy's inspector in a thread."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, ParamSpec, TypeVar

import sqlalchemy.exc
from sqlalchemy import inspect

from backend.codes import Code
from backend.config import Settings
from backend.datasources import engines
from backend.datasources.engines import Datasource
from backend.datasources.readonly import DatasourceUnavailable
from backend.errors import NotFound, Unprocessable

P = ParamSpec("P")
T = TypeVar("T")

TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


@dataclass(frozen=True)
class Table:
    name: str
    kind: Literal["table", "view"]


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    nullable: bool
    primary_key: bool


def validate_table_name(table: str) -> str:
    """`table` when it is a plain identifier, else Unprocessable naming the rule."""
    if not TABLE_NAME.fullmatch(table):
        raise Unprocessable(
            "Table names are letters, digits and underscores, starting with a letter or "
            "underscore, at most 63 characters",
            code=Code.INVALID_TABLE_NAME,
            details={"table": table[:200]},
        )
    return table


def _tables(settings: Settings, source: Datasource) -> list[Table]:
    inspector = inspect(engines.readonly_engine(settings, source))
    tables = [Table(n, "table") for n in inspector.get_table_names()]
    views = [Table(n, "view") for n in inspector.get_view_names()]
    return sorted(tables + views, key=lambda t: t.name)


def _columns(settings: Settings, source: Datasource, table: str) -> list[Column]:
    names = {t.name for t in _tables(settings, source)}
    if table not in names:
        raise NotFound(
            f"Table '{table}' does not exist in datasource '{source.name}'",
            details={"datasource": source.name, "table": table},
        )
    inspector = inspect(engines.readonly_engine(settings, source))
    primary = set(inspector.get_pk_constraint(table).get("constrained_columns") or [])
    return [
        Column(c["name"], str(c["type"]), bool(c["nullable"]), c["name"] in primary)
        for c in inspector.get_columns(table)
    ]


async def tables(*, settings: Settings, datasource: str) -> list[Table]:
    """Tables and views of the datasource's default schema."""
    source = engines.get(settings, datasource)
    return await _inspecting(source, _tables, settings, source)


async def columns(*, settings: Settings, datasource: str, table: str) -> list[Column]:
    """Columns of one table or view; NotFound when it does not exist."""
    source = engines.get(settings, datasource)
    validate_table_name(table)
    return await _inspecting(source, _columns, settings, source, table)


async def _inspecting(
    source: Datasource, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs
) -> T:
    try:
        return await asyncio.to_thread(fn, *args, **kwargs)
    except (*engines.CONNECT_ERRORS, sqlalchemy.exc.TimeoutError) as exc:
        raise DatasourceUnavailable(
            f"Could not read the schema of datasource '{source.name}'",
            details={"datasource": source.name},
        ) from exc
