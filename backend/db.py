"""Engine and session factories, and the declarative Base with a constraint naming convention."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, MetaData, Pool, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: DateTime(timezone=True)}


def utcnow() -> datetime:
    return datetime.now(UTC)


class Timestamped:
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


def async_url(database_url: str) -> URL:
    """`postgresql://...` (the form users configure) -> the asyncpg driver URL."""
    return make_url(database_url).set(drivername="postgresql+asyncpg")


def sync_url(database_url: str) -> URL:
    """The psycopg (v3) driver URL, for Alembic and tools that want a sync connection."""
    return make_url(database_url).set(drivername="postgresql+psycopg")


# Connections kept open between requests. A burst past the kept ones opens "overflow"
# connections, closed again when returned: each a new Postgres server process, a TLS handshake
# where the server offers it, and asyncpg's type introspection, a few milliseconds of this
# process's CPU apiece. Agent runs arrive in bursts (a lease, a history row, a tool call each),
# so the kept pool covers a burst of 25 runs; Postgres' default 100 connections still fit two
# backends at their peak and the agents' checkpoint pools.
POOL_SIZE = 25
POOL_OVERFLOW = 5


# A connection back in the pool for longer than this is pinged before it is handed out again
# (a database restart or an idle timeout may have closed it); one used more recently is
# handed out as it is. SQLAlchemy's pool_pre_ping pings every time: on asyncpg that is three
# round trips (BEGIN, ";", ROLLBACK), about a fifth of a lease renewal's CPU in the backend.
# A connection that died within the window fails its request as a lost store does (503
# STORE_UNAVAILABLE, which the agent retries), and that failure recycles the whole pool.
PING_AFTER_IDLE_S = 5.0


def create_engine(
    database_url: str, *, pool_size: int = POOL_SIZE, ping_after_idle_s: float = PING_AFTER_IDLE_S
) -> AsyncEngine:
    engine = create_async_engine(
        async_url(database_url), pool_size=pool_size, max_overflow=POOL_OVERFLOW
    )
    _ping_when_idle(engine.sync_engine.pool, ping_after_idle_s)
    return engine


def _ping_when_idle(pool: Pool, idle_s: float) -> None:
    @event.listens_for(pool, "connect")
    @event.listens_for(pool, "checkin")
    def _mark(dbapi_connection: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(pool, "checkout")
    def _ping(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        if time.monotonic() - record.info.get("idle_since", 0.0) < idle_s:
            return
        try:
            dbapi_connection.ping()
        except Exception as exc:  # the pool replaces it with a fresh connection
            raise DisconnectionError(f"connection lost while idle: {exc}") from exc


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)
