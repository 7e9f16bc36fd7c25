"""Read-only SQL over configured datasources: the one path every query takes
(the /query endpoint, dashboard validation, the agent's execute_sql tool)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backend.config import Settings


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool
    elapsed_ms: float


async def execute_readonly(
    *, settings: Settings, datasource: str, sql: str, limit: int | None = None
) -> QueryResult:
    """Guard `sql` (exactly one SELECT) and run it read-only with row, byte and time caps.

    Raises NotFound for an unknown datasource, Unprocessable(code="SQL_REJECTED",
    details={"reason": ...}) for a refused statement, and AppError subclasses with codes
    "SQL_ERROR" / "SQL_TIMEOUT" when execution fails.
    """
    raise NotImplementedError
