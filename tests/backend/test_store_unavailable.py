"""While its database is unreachable the backend answers 503 STORE_UNAVAILABLE (a write to send
again), never 500; a bad value or a bug stays what it was. No database needed: the handlers are
exercised on a bare app (the restart itself: tests/faults/test_postgres_restart.py)."""

from __future__ import annotations

import asyncpg
import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.exc import DBAPIError, OperationalError

from backend.errors import install_handlers, store_unreachable


class _Orig(Exception):
    def __init__(self, sqlstate: str | None = None) -> None:
        super().__init__("orig")
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    "exc",
    [
        ConnectionRefusedError(111, "Connection refused"),
        OSError("Multiple exceptions: [Errno 111] Connect call failed ('127.0.0.1', 5432)"),
        asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed"),
        asyncpg.exceptions.CannotConnectNowError("the database system is starting up"),
        OperationalError("SELECT 1", {}, _Orig("57P01")),  # admin shutdown
        DBAPIError("SELECT 1", {}, _Orig(), connection_invalidated=True),
    ],
    ids=lambda e: type(e).__name__,
)
def test_a_lost_database_is_unreachable(exc: Exception) -> None:
    assert store_unreachable(exc)


@pytest.mark.parametrize(
    "exc",
    [
        FileNotFoundError(2, "No such file"),
        DBAPIError("INSERT", {}, _Orig("22021")),  # a NUL in text: bad input
        DBAPIError("INSERT", {}, _Orig("23505")),  # a unique violation
        RuntimeError("a bug"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_anything_else_is_not(exc: Exception) -> None:
    assert not store_unreachable(exc)


async def test_the_answer_is_503_store_unavailable_and_a_file_error_stays_500() -> None:
    app = FastAPI()
    install_handlers(app)

    @app.get("/away")
    async def away() -> None:
        raise ConnectionRefusedError(111, "Connection refused")

    @app.get("/file")
    async def file() -> None:
        raise FileNotFoundError(2, "No such file")

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://backend") as client:
        response = await client.get("/away")
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "STORE_UNAVAILABLE"
        assert (await client.get("/file")).status_code == 500
