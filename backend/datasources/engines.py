"""Configured datasources and their SQLAlchemy engines, created lazily and cached by URL.

Engines are synchronous (psycopg, sqlite3): every use runs in a worker thread. None is created
at import time; the first query for a datasource builds it, `dispose_all()` closes them all.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg
import sqlalchemy.exc
from sqlalchemy import Engine, create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool, QueuePool

from backend.config import DatasourceSettings, Settings
from backend.errors import NotFound, Unprocessable

# What opening a connection may raise: raw_connection() passes the drivers' own errors through.
CONNECT_ERRORS = (sqlalchemy.exc.DBAPIError, psycopg.Error, sqlite3.Error)

# SQLAlchemy backend name -> sqlglot dialect.
SQLGLOT_DIALECTS = {"postgresql": "postgres", "sqlite": "sqlite"}


@dataclass(frozen=True)
class Datasource:
    """A configured datasource; `url` stays server-side and is never rendered."""

    name: str
    url: str
    description: str

    @property
    def dialect(self) -> str:
        return make_url(self.url).get_backend_name()

    @property
    def sqlglot_dialect(self) -> str:
        return SQLGLOT_DIALECTS[self.dialect]

    @property
    def sqlite_path(self) -> Path:
        database = make_url(self.url).database
        if not database or database == ":memory:":
            raise Unprocessable(f"Datasource '{self.name}' has no SQLite file")
        return Path(database)


def get(settings: Settings, name: str) -> Datasource:
    """The datasource called `name`, or NotFound."""
    config: DatasourceSettings | None = settings.datasources.get(name)
    if config is None:
        raise NotFound(f"Datasource '{name}' is not configured", details={"datasource": name})
    source = Datasource(name=name, url=config.url, description=config.description)
    if source.dialect not in SQLGLOT_DIALECTS:
        raise Unprocessable(
            f"Datasource '{name}' uses the unsupported dialect '{source.dialect}'",
            details={"datasource": name, "supported": sorted(SQLGLOT_DIALECTS)},
        )
    return source


def all_(settings: Settings) -> list[Datasource]:
    """Every configured datasource, by name (an unsupported one is listed, not used)."""
    return [
        Datasource(name=name, url=config.url, description=config.description)
        for name, config in sorted(settings.datasources.items())
    ]


def _postgres_url(url: str) -> str:
    return make_url(url).set(drivername="postgresql+psycopg").render_as_string(hide_password=False)


def _readonly_sqlite(path: Path) -> Engine:
    uri = f"file:{quote(str(path))}?mode=ro"

    def connect() -> sqlite3.Connection:
        # check_same_thread=False: the pool hands a connection to whichever worker thread asks.
        return sqlite3.connect(uri, uri=True, check_same_thread=False)

    return create_engine(
        "sqlite://", creator=connect, poolclass=QueuePool, pool_size=5, max_overflow=5
    )


def _build(source: Datasource, *, readonly: bool, timeout_s: float) -> Engine:
    if source.dialect == "sqlite":
        if readonly:
            return _readonly_sqlite(source.sqlite_path)
        return create_engine(source.url, poolclass=NullPool)
    connect_args = {"connect_timeout": max(1, int(timeout_s))}
    if readonly:
        return create_engine(
            _postgres_url(source.url),
            pool_size=5,
            max_overflow=5,
            pool_pre_ping=True,
            pool_timeout=timeout_s,
            connect_args=connect_args,
        )
    return create_engine(_postgres_url(source.url), poolclass=NullPool, connect_args=connect_args)


class EngineRegistry:
    """Read-only engines cached per datasource URL; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._engines: dict[str, Engine] = {}

    def readonly(self, source: Datasource, *, timeout_s: float) -> Engine:
        with self._lock:
            engine = self._engines.get(source.url)
            if engine is None:
                engine = _build(source, readonly=True, timeout_s=timeout_s)
                self._engines[source.url] = engine
            return engine

    def dispose(self) -> None:
        with self._lock:
            engines, self._engines = list(self._engines.values()), {}
        for engine in engines:
            engine.dispose()


registry = EngineRegistry()


def readonly_engine(settings: Settings, source: Datasource) -> Engine:
    """The cached engine for queries and schema inspection."""
    return registry.readonly(source, timeout_s=settings.sql.timeout_s)


def writable_engine(settings: Settings, source: Datasource) -> Engine:
    """A one-off, unpooled engine for applying a migration; the caller disposes it."""
    return _build(source, readonly=False, timeout_s=settings.sql.timeout_s)


def dispose_all() -> None:
    """Close every cached engine (app shutdown)."""
    registry.dispose()
