"""Operational log entries written by the system's own operations."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession


def write(
    *,
    session: AsyncSession,
    level: str,
    source: str,
    message: str,
    dashboard_id: int | None = None,
    details: dict[str, Any] | None = None,
) -> None:
    """Add one log entry to the session (the caller commits). level: debug/info/warning/error."""
    raise NotImplementedError
