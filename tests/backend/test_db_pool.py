"""The pool pings a connection that sat idle before handing it out, and only such a one: a
connection the server closed while idle is replaced unseen; one closed within the idle window
fails its one statement (the backend's 503 STORE_UNAVAILABLE) and the pool starts afresh."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from backend import db


def _terminate(database_url: str, pid: int) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))


async def _backend_pid(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int(await conn.scalar(text("SELECT pg_backend_pid()")))


async def test_an_idle_connection_closed_by_the_server_is_replaced_before_use(database_url):
    engine = db.create_engine(database_url, pool_size=1, ping_after_idle_s=0)
    try:
        first = await _backend_pid(engine)
        _terminate(database_url, first)
        second = await _backend_pid(engine)  # the ping found it dead: a fresh connection
        assert second != first
    finally:
        await engine.dispose()


async def test_a_connection_used_within_the_window_is_not_pinged(database_url):
    engine = db.create_engine(database_url, pool_size=1, ping_after_idle_s=60)
    try:
        first = await _backend_pid(engine)
        _terminate(database_url, first)
        with pytest.raises(DBAPIError) as lost:  # no ping: the statement meets the closed one
            await _backend_pid(engine)
        assert lost.value.connection_invalidated
        assert await _backend_pid(engine) != first  # and the pool started afresh
    finally:
        await engine.dispose()
