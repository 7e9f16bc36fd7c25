"""Session-wide real infrastructure: a fresh Postgres database, migrated and seeded, and the
backend running as its own process over real HTTP."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from backend.migrate import upgrade
from tests.support import db
from tests.support.processes import run_cli, serve

TEST_JWT_SECRET = "test-jwt-secret-for-the-suite-0123456789abcdef"
AGENT_CLIENT_SECRET = "test-agent-client-secret"
PASSWORDS = {"admin": "admin-test-pass", "editor": "editor-test-pass", "viewer": "viewer-test-pass"}


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """`-n N --dist loadgroup`: the suite's groups (tests/support/groups.py)."""
    if config.getoption("dist") != "loadgroup":
        return None
    from tests.support.groups import SuiteScheduling

    return SuiteScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if getattr(config, "workerinput", None) is not None and config.getoption("loadgroup", False):
        from tests.support.groups import longest_first

        longest_first(items)


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    admin = db.server_url()
    url = db.create_database(admin)
    try:
        upgrade(url)
        yield url
    finally:
        db.drop_database(admin, url)


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="session")
def warehouse_url() -> Iterator[str]:
    """An empty Postgres database behind the `warehouse` datasource (its tests fill it)."""
    admin = db.server_url()
    url = db.create_database(admin)
    try:
        yield url
    finally:
        db.drop_database(admin, url)


@pytest.fixture(scope="session")
def backend_env(database_url: str, data_dir: Path, warehouse_url: str) -> dict[str, str]:
    """The environment every project process of the suite runs with."""
    return {
        "DATASOURCES__WAREHOUSE__URL": warehouse_url,
        "SQL__TIMEOUT_S": "2",
        "ENV": "development",
        "DATABASE_URL": database_url,
        "DATA_DIR": str(data_dir),
        "JWT_SECRET": TEST_JWT_SECRET,
        "AGENT_CLIENT_ID": "agent-chat",
        "AGENT_CLIENT_SECRET": AGENT_CLIENT_SECRET,
        "SEED_ADMIN_PASSWORD": PASSWORDS["admin"],
        "SEED_EDITOR_PASSWORD": PASSWORDS["editor"],
        "SEED_VIEWER_PASSWORD": PASSWORDS["viewer"],
        "LOG_LEVEL": "WARNING",
        # The retention tests run their own sweeps (tests/agent/test_retention.py).
        "RETENTION__ENABLED": "false",
        # Schedules run only in the backends tests/schedules/ starts (with an agent to call).
        "SCHEDULES__ENABLED": "false",
    }


@pytest.fixture(scope="session")
def seeded(backend_env: dict[str, str]) -> dict[str, str]:
    run_cli(["seed"], {**os.environ, **backend_env})
    return backend_env


@pytest.fixture(scope="session")
def backend_url(seeded: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("logs") / "backend.log"
    with serve(["backend"], seeded, health_path="/readyz", log_path=log) as (base, _proc):
        yield base


@pytest.fixture(scope="session")
def api(backend_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=backend_url, timeout=30) as client:
        yield client


@pytest.fixture()
def sql(database_url: str) -> Iterator[psycopg.Connection]:
    """Direct database access for asserting rows."""
    with db.connect(database_url) as conn:
        yield conn


def login(api: httpx.Client, username: str, password: str) -> str:
    response = api.post("/api/auth/login", json={"username": username, "password": password})
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="session")
def tokens(api: httpx.Client) -> dict[str, str]:
    """A user JWT for each demo role."""
    return {name: login(api, name, password) for name, password in PASSWORDS.items()}


class ServiceTokens:
    """The agent's service JWT, fetched again once it is half-way to its 5-minute expiry, so a
    test late in a long session never holds an expired one."""

    def __init__(self, api: httpx.Client) -> None:
        self.api = api
        self._token = ""
        self._renew_at = 0.0

    def get(self) -> str:
        if time.monotonic() >= self._renew_at:
            response = self.api.post(
                "/api/auth/service-token",
                json={"client_id": "agent-chat", "client_secret": AGENT_CLIENT_SECRET},
            )
            assert response.status_code == 200, response.text
            body = response.json()
            self._token = str(body["access_token"])
            self._renew_at = time.monotonic() + int(body.get("expires_in", 300)) / 2
        return self._token


@pytest.fixture(scope="session")
def service_tokens(api: httpx.Client) -> ServiceTokens:
    return ServiceTokens(api)


@pytest.fixture()
def service_token(service_tokens: ServiceTokens) -> str:
    return service_tokens.get()


@pytest.fixture(scope="session")
def as_user(tokens: dict[str, str]) -> dict[str, dict[str, str]]:
    """Headers for each demo role calling with its own user JWT."""
    return {name: bearer(token) for name, token in tokens.items()}


@pytest.fixture()
def as_agent(tokens: dict[str, str], service_token: str) -> dict[str, dict[str, str]]:
    """Headers for the agent service acting on behalf of each demo role (dual identity)."""
    return {
        name: {**bearer(service_token), "X-On-Behalf-Of": token} for name, token in tokens.items()
    }
