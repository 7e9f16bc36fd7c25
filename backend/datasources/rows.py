"""Turning driver rows into JSON-safe lists, within a row cap and a byte cap."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Callable, Sequence
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

FETCH_BATCH = 500

Fetch = Callable[[int], Sequence[Sequence[Any]]]


def jsonable(value: Any) -> Any:
    """A JSON-safe form of one database value (ISO dates, numbers, hex bytes)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        return float(value) if value.is_finite() else str(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bytes | bytearray | memoryview):
        return "\\x" + bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    return str(value)


def _size(row: list[Any]) -> int:
    return len(json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode()) + 1


def collect(fetch: Fetch, *, row_cap: int, byte_cap: int) -> tuple[list[list[Any]], bool]:
    """Fetch rows until the result ends (truncated=False) or a cap is reached (True)."""
    rows: list[list[Any]] = []
    used = 2  # the enclosing brackets
    while True:
        # Ask for one row past the cap: its presence is what makes the result truncated.
        batch = fetch(min(FETCH_BATCH, row_cap + 1 - len(rows)))
        if not batch:
            return rows, False
        for raw in batch:
            if len(rows) >= row_cap:
                return rows, True
            row = [jsonable(v) for v in raw]
            used += _size(row)
            if used > byte_cap:
                return rows, True
            rows.append(row)
