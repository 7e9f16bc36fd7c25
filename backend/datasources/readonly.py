"""Read-only SQL over configured datasources: the one path every query takes
(the /query endpoint, dashboard validation, the agent's execute_sql tool)."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
import sqlalchemy.exc
from sqlalchemy import Engine
from sqlalchemy.pool import PoolProxiedConnection

from backend.codes import Code
from backend.config import Settings
from backend.datasources import engines
from backend.datasources.engines import Datasource
from backend.datasources.rows import Fetch, collect
from backend.datasources.sqlguard import DENIED_FUNCTIONS, SqlRejected, guard
from backend.errors import AppError, ServiceUnavailable, Unprocessable

log = logging.getLogger(__name__)
CONNECTION_CHECK_SINCE = 140000  # client_connection_check_interval is PostgreSQL 14+
CHECK_MS = 1000


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool
    elapsed_ms: float


class SqlError(Unprocessable):
    """The database refused or failed the query; the message is the database's own, short."""

    code = Code.SQL_ERROR


class SqlTimeout(Unprocessable):
    code = Code.SQL_TIMEOUT


class DatasourceUnavailable(ServiceUnavailable):
    code = Code.SQL_ERROR


class Statement:
    """The driver connection a query runs on, so that another thread can cancel it.

    A cancelled request (the client went away, the server stops) cancels its statement on the
    database instead of leaving it running until the statement timeout.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: Any = None
        self.cancelled = False

    def attach(self, conn: Any) -> None:
        with self._lock:
            if self.cancelled:
                raise QueryCancelled("The query was cancelled")
            self._conn = conn

    def detach(self) -> None:
        with self._lock:
            self._conn = None

    def cancel(self) -> None:
        """Ask the database to stop the running statement (blocking; call it in a thread)."""
        with self._lock:
            self.cancelled, conn = True, self._conn
        if isinstance(conn, sqlite3.Connection):
            conn.interrupt()
        elif isinstance(conn, psycopg.Connection):
            try:
                conn.cancel_safe(timeout=5)
            except psycopg.Error as exc:
                log.warning("could not cancel a query: %s", type(exc).__name__)


class QueryCancelled(AppError):
    """The request that ran the query was cancelled; the statement was cancelled with it."""

    status_code = 499
    code = Code.CANCELLED


@dataclass(frozen=True)
class _Caps:
    row_cap: int
    byte_cap: int
    timeout_s: float
    deadline: float


async def execute_readonly(
    *, settings: Settings, datasource: str, sql: str, limit: int | None = None
) -> QueryResult:
    """Guard `sql` (exactly one SELECT) and run it read-only with row, byte and time caps.

    Raises NotFound for an unknown datasource, Unprocessable(code=Code.SQL_REJECTED,
    details={"reason": ...}) for a refused statement, and AppError subclasses with codes
    Code.SQL_ERROR / Code.SQL_TIMEOUT when execution fails.
    """
    source = engines.get(settings, datasource)
    if limit is not None and limit < 1:
        raise Unprocessable("limit must be at least 1", details={"limit": limit})
    row_cap = settings.sql.row_cap if limit is None else min(limit, settings.sql.row_cap)
    statement = Statement()
    try:
        return await asyncio.to_thread(_execute, settings, source, sql, row_cap, statement)
    except asyncio.CancelledError:
        # The worker thread cannot be cancelled, its statement can: the thread then ends too.
        await asyncio.shield(asyncio.to_thread(statement.cancel))
        raise


def _execute(
    settings: Settings, source: Datasource, sql: str, row_cap: int, statement: Statement
) -> QueryResult:
    guard(sql, dialect=source.sqlglot_dialect)
    started = time.monotonic()
    timeout_s = settings.sql.timeout_s
    caps = _Caps(row_cap, settings.sql.byte_cap, timeout_s, started + timeout_s)
    engine = engines.readonly_engine(settings, source)
    run = _run_sqlite if source.dialect == "sqlite" else _run_postgres
    with _checkout(engine, source) as raw:
        statement.attach(raw.driver_connection)
        try:
            columns, rows, truncated = run(raw, sql, caps)
        finally:
            statement.detach()
    elapsed_ms = round((time.monotonic() - started) * 1000, 1)
    return QueryResult(columns, rows, len(rows), truncated, elapsed_ms)


@contextmanager
def _checkout(engine: Engine, source: Datasource) -> Iterator[PoolProxiedConnection]:
    try:
        raw = engine.raw_connection()
    except sqlalchemy.exc.TimeoutError as exc:
        raise DatasourceUnavailable(f"Datasource '{source.name}' is busy; try again") from exc
    except engines.CONNECT_ERRORS as exc:
        # The driver's message may name hosts and users: keep it out of the response.
        raise DatasourceUnavailable(
            f"Could not connect to datasource '{source.name}'",
            details={"datasource": source.name},
        ) from exc
    try:
        yield raw
    finally:
        raw.close()


def _bounded(fetch: Fetch, caps: _Caps) -> Fetch:
    """`fetch`, refusing to go on once the wall-clock deadline has passed."""

    def bounded(size: int) -> Sequence[Sequence[Any]]:
        if time.monotonic() > caps.deadline:
            raise _timeout(caps)
        return fetch(size)

    return bounded


def _timeout(caps: _Caps) -> SqlTimeout:
    return SqlTimeout(
        f"The query exceeded the {caps.timeout_s:g}s timeout and was cancelled",
        details={"timeout_s": caps.timeout_s},
    )


Outcome = tuple[list[str], list[list[Any]], bool]


def _run_postgres(raw: PoolProxiedConnection, sql: str, caps: _Caps) -> Outcome:
    conn: psycopg.Connection[Any] = raw.driver_connection  # type: ignore[assignment]
    timeout_ms = max(1, int(caps.timeout_s * 1000))
    try:
        with conn.cursor() as setup:
            setup.execute("SET TRANSACTION READ ONLY")
            setup.execute(f"SET LOCAL statement_timeout = {timeout_ms}")
            setup.execute(f"SET LOCAL lock_timeout = {timeout_ms}")
            if conn.info.server_version >= CONNECTION_CHECK_SINCE:
                # A backend process killed mid-query leaves no one to cancel the statement:
                # the server then notices the closed socket by itself within a second.
                setup.execute(f"SET LOCAL client_connection_check_interval = {CHECK_MS}")
        # A server-side cursor: rows stream in batches, and the extended protocol it uses
        # refuses a second statement even if one slipped past the guard.
        with conn.cursor(name="agent_chat_readonly") as cursor:
            cursor.execute(sql)
            columns = [c.name for c in cursor.description or []]
            fetch = _bounded(cursor.fetchmany, caps)
            rows, truncated = collect(fetch, row_cap=caps.row_cap, byte_cap=caps.byte_cap)
        return columns, rows, truncated
    except psycopg.errors.QueryCanceled as exc:
        raise _timeout(caps) from exc
    except psycopg.errors.ReadOnlySqlTransaction as exc:
        raise SqlRejected("write_attempt", _pg_message(exc)) from exc
    except psycopg.Error as exc:
        raise SqlError(_pg_message(exc), details={"sqlstate": exc.sqlstate}) from exc
    finally:
        _rollback(raw, conn)


def _rollback(raw: PoolProxiedConnection, conn: psycopg.Connection[Any]) -> None:
    try:
        conn.rollback()
    except psycopg.Error:
        raw.invalidate()


def _pg_message(exc: psycopg.Error) -> str:
    primary = exc.diag.message_primary if exc.diag else None
    return primary or (str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


_SQLITE_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE}


def _authorize(action: int, arg1: str | None, arg2: str | None, *_: Any) -> int:
    """SQLite authorizer: reads and harmless functions only (defence behind the guard)."""
    if action in _SQLITE_ALLOWED:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() not in DENIED_FUNCTIONS:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def _run_sqlite(raw: PoolProxiedConnection, sql: str, caps: _Caps) -> Outcome:
    conn: sqlite3.Connection = raw.driver_connection  # type: ignore[assignment]
    conn.set_progress_handler(lambda: int(time.monotonic() > caps.deadline), 1000)
    conn.set_authorizer(_authorize)
    try:
        cursor = conn.execute(sql)
        try:
            columns = [d[0] for d in cursor.description or []]
            rows, truncated = collect(
                _bounded(cursor.fetchmany, caps), row_cap=caps.row_cap, byte_cap=caps.byte_cap
            )
        finally:
            cursor.close()
        return columns, rows, truncated
    except sqlite3.Error as exc:
        raise _sqlite_error(exc, caps) from exc
    finally:
        conn.set_progress_handler(None, 0)
        conn.set_authorizer(None)


def _sqlite_error(exc: sqlite3.Error, caps: _Caps) -> Exception:
    message = str(exc) or type(exc).__name__
    if message == "interrupted" or time.monotonic() > caps.deadline:
        return _timeout(caps)
    if "not authorized" in message:
        return SqlRejected("not_authorized", f"the database refused the operation ({message})")
    if "readonly" in message:
        return SqlRejected("write_attempt", message)
    return SqlError(message)
