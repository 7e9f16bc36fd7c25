"""Fixtures of the backend tests."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from sqlalchemy.ext.asyncio import AsyncSession

from backend import db
from tests.backend.support import NewUser, Person
from tests.conftest import ServiceTokens, login


@pytest.fixture(scope="session")
def new_user(
    api: httpx.Client, as_user: dict[str, dict[str, str]], service_tokens: ServiceTokens
) -> NewUser:
    """Create a user through the admin API and log it in."""

    def make(role: str = "viewer", prefix: str = "u") -> Person:
        username = f"{prefix}_{uuid.uuid4().hex[:10]}"
        password = f"pw-{uuid.uuid4().hex}"
        created = api.post(
            "/api/admin/users",
            json={"username": username, "password": password, "roles": [role]},
            headers=as_user["admin"],
        )
        assert created.status_code == 201, created.text
        token = login(api, username, password)
        return Person(created.json()["id"], username, password, token, service_tokens.get())

    return make


@pytest.fixture(scope="session")
def checkpointer(database_url: str) -> Iterator[PostgresSaver]:
    """LangGraph's real Postgres checkpointer on the suite's database (FR-012)."""
    with PostgresSaver.from_conn_string(database_url) as saver:
        saver.setup()
        yield saver


@pytest.fixture()
async def session(database_url: str) -> AsyncIterator[AsyncSession]:
    """An ORM session on the test database, for calling service functions directly."""
    engine = db.create_engine(database_url, pool_size=1)
    try:
        async with db.session_factory(engine)() as s:
            yield s
    finally:
        await engine.dispose()
