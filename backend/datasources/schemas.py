"""datasources request and response bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from backend.datasources.sqlguard import MAX_SQL_CHARS


class DatasourceRead(BaseModel):
    """A configured datasource; its URL and credentials are never part of a response."""

    name: str
    dialect: str = Field(description="sqlite or postgresql")
    description: str


class DatasourceList(BaseModel):
    items: list[DatasourceRead]


class TableRead(BaseModel):
    name: str
    kind: Literal["table", "view"]


class TableList(BaseModel):
    datasource: str
    items: list[TableRead]


class ColumnRead(BaseModel):
    name: str
    type: str = Field(description="The database's type name, e.g. INTEGER, TEXT, NUMERIC(10, 2)")
    nullable: bool
    primary_key: bool


class ColumnList(BaseModel):
    datasource: str
    table: str
    items: list[ColumnRead]


class QueryRequest(BaseModel):
    sql: str = Field(
        min_length=1,
        max_length=MAX_SQL_CHARS,
        description="Exactly one read-only SELECT (CTEs and UNION allowed)",
    )
    limit: int | None = Field(
        default=None, ge=1, description="Row cap for this query; never above the server's cap"
    )


class QueryRead(BaseModel):
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool = Field(description="True when the row or byte cap cut the result")
    elapsed_ms: float


class MigrationRead(BaseModel):
    id: str
    datasource: str
    description: str
    status: Literal["pending", "applied"]
    checksum: str = Field(description="sha256 of the shipped SQL file")
    applied_by: str | None = None
    applied_at: datetime | None = None


class MigrationList(BaseModel):
    datasource: str
    items: list[MigrationRead]
