"""Operational log entries written by the system's own operations, and searching them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, func, literal_column, select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.errors import Unprocessable
from backend.oplogs.models import LEVELS, OperationalLog
from backend.oplogs.schemas import Level
from backend.principal import Principal

MAX_SOURCE_LENGTH = 32
MAX_MESSAGE_LENGTH = 10_000


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
    if level not in LEVELS:
        raise ValueError(f"unknown log level {level!r}; expected one of {', '.join(LEVELS)}")
    if not source or len(source) > MAX_SOURCE_LENGTH:
        raise ValueError(f"log source must be 1-{MAX_SOURCE_LENGTH} characters")
    session.add(
        OperationalLog(
            level=level,
            source=source,
            message=message[:MAX_MESSAGE_LENGTH],
            dashboard_id=dashboard_id,
            details=details or {},
        )
    )


@dataclass(frozen=True)
class LogFilter:
    """What `search` narrows to; every field is optional."""

    query: str | None = None
    min_level: Level | None = None
    source: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    dashboard_id: int | None = None

    def described(self) -> dict[str, Any]:
        """The filter as audit details: the fields that are set, times as ISO 8601."""
        shown: dict[str, Any] = {
            "query": self.query,
            "level": self.min_level.value if self.min_level else None,
            "source": self.source,
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "dashboard_id": self.dashboard_id,
        }
        return {key: value for key, value in shown.items() if value is not None}


def _aware(moment: datetime) -> datetime:
    """A timestamp without a zone is taken as UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _text_match(query: str) -> ColumnElement[bool]:
    """Web-search syntax over words as written and English stems; input is never SQL."""
    tsquery = func.websearch_to_tsquery(literal_column("'simple'::regconfig"), query).op("||")(
        func.websearch_to_tsquery(literal_column("'english'::regconfig"), query)
    )
    return OperationalLog.search.op("@@")(tsquery)


def _filtered(where: LogFilter) -> Select[OperationalLog]:
    stmt = select(OperationalLog)
    if where.query and where.query.strip():
        stmt = stmt.where(_text_match(where.query))
    if where.min_level is not None:
        allowed = LEVELS[LEVELS.index(where.min_level.value) :]
        stmt = stmt.where(OperationalLog.level.in_(allowed))
    if where.source:
        stmt = stmt.where(OperationalLog.source == where.source)
    if where.since is not None:
        stmt = stmt.where(OperationalLog.created_at >= _aware(where.since))
    if where.until is not None:
        stmt = stmt.where(OperationalLog.created_at < _aware(where.until))
    if where.dashboard_id is not None:
        stmt = stmt.where(OperationalLog.dashboard_id == where.dashboard_id)
    return stmt


async def search(
    *,
    session: AsyncSession,
    where: LogFilter,
    limit: int,
    offset: int,
    actor: Principal | None = None,
) -> tuple[list[OperationalLog], int]:
    """Matching entries, newest first, and how many match in all (audited within agent runs)."""
    resource = str(where.dashboard_id) if where.dashboard_id is not None else None
    async with audit.run_read(
        session=session,
        actor=actor,
        action="logs.search",
        resource_type="dashboard" if resource else None,
        resource_id=resource,
        details=where.described(),
    ):
        return await _search(session, where, limit, offset)


async def _search(
    session: AsyncSession, where: LogFilter, limit: int, offset: int
) -> tuple[list[OperationalLog], int]:
    if where.since and where.until and _aware(where.since) > _aware(where.until):
        raise Unprocessable(
            "since must not be later than until",
            details={"since": where.since.isoformat(), "until": where.until.isoformat()},
        )
    stmt = _filtered(where)
    total = await session.scalar(select(func.count()).select_from(stmt.subquery()))
    rows = await session.scalars(
        stmt.order_by(OperationalLog.created_at.desc(), OperationalLog.id.desc())
        .limit(limit)
        .offset(offset)
    )
    return list(rows), int(total or 0)
