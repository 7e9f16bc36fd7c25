"""Two real Apache Superset instances (staging and production), started once for this suite
(tests/support/superset.py), with dashboards built through Superset's own API; a backend and an
agent of the platform pointed at them. The suite runs in one xdist worker (groups.py): each
Superset is ~350 MB."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url

from backend.migrate import upgrade
from tests.conftest import AGENT_CLIENT_SECRET, PASSWORDS, TEST_JWT_SECRET, bearer, login
from tests.fakes.llm_server import FakeLLM
from tests.support import db, superset
from tests.support.processes import run_cli, scripted_agent, serve
from tests.support.superset import Instance
from tests.support.superset_build import (
    SupersetAdmin,
    build_production,
    build_staging,
    fill_warehouse,
)

STAGING_ROWS = [("north", 10.0), ("south", 20.0), ("east", 5.0)]
PRODUCTION_ROWS = [("prod-north", 1000.0), ("prod-south", 3000.0)]


@dataclass(frozen=True)
class Stack:
    """The two Superset instances and what the tests built in them."""

    staging: superset.Instance
    production: superset.Instance
    warehouses: dict[str, str]  # environment -> libpq URL of its `Warehouse` database
    staging_ids: dict[str, int]  # dashboard slug -> id in staging
    production_database_id: int

    def admin(self, environment: str) -> SupersetAdmin:
        instance = self.staging if environment == "staging" else self.production
        return SupersetAdmin(instance.url, superset.ADMIN_USER, superset.ADMIN_PASSWORD)


def _psycopg2(url: str) -> str:
    return make_url(url).set(drivername="postgresql+psycopg2").render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def superset_booting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Instance]]:
    """Both instances started, not yet answering: the platform's database is migrated and seeded
    while they boot (tens of seconds on a loaded machine)."""
    admin_url = db.server_url()
    try:
        venv = superset.venv()
    except subprocess.CalledProcessError as exc:  # no network and no cached venv
        pytest.skip(f"the Superset venv could not be built (superset/venv.sh): {exc.stderr[-300:]}")
    work = tmp_path_factory.mktemp("superset")
    template = superset.template(admin_url, venv, work / "template")
    names = ("staging", "production")
    with superset.serve(admin_url, venv, template, work, names, wait=False) as found:
        yield found


@pytest.fixture(scope="session")
def superset_stack(superset_booting: dict[str, Instance]) -> Iterator[Stack]:
    """The instances answering, with the tests' databases and dashboards built in them."""
    admin_url = db.server_url()
    warehouses = {env: db.create_database(admin_url) for env in ("staging", "production")}
    try:
        fill_warehouse(warehouses["staging"], STAGING_ROWS)
        fill_warehouse(warehouses["production"], PRODUCTION_ROWS)
        for instance in superset_booting.values():
            instance.wait()
        found = superset_booting
        staging = SupersetAdmin(found["staging"].url, superset.ADMIN_USER, superset.ADMIN_PASSWORD)
        production = SupersetAdmin(
            found["production"].url, superset.ADMIN_USER, superset.ADMIN_PASSWORD
        )
        try:
            ids = build_staging(staging, _psycopg2(warehouses["staging"]))
            prod_db = build_production(production, _psycopg2(warehouses["production"]))
        finally:
            staging.close()
            production.close()
        yield Stack(found["staging"], found["production"], warehouses, ids, prod_db)
    finally:
        for url in warehouses.values():
            db.drop_database(admin_url, url)


@pytest.fixture(scope="session")
def ss_database_url() -> Iterator[str]:
    admin = db.server_url()
    url = db.create_database(admin)
    try:
        upgrade(url)
        yield url
    finally:
        db.drop_database(admin, url)


@pytest.fixture(scope="session")
def ss_env(
    ss_database_url: str,
    superset_booting: dict[str, Instance],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, str]:
    """A platform configured with the two Superset instances (seeded: users, no demo
    dashboards)."""
    env = {
        "ENV": "development",
        "DATABASE_URL": ss_database_url,
        "DATA_DIR": str(tmp_path_factory.mktemp("ss-data")),
        "JWT_SECRET": TEST_JWT_SECRET,
        "AGENT_CLIENT_ID": "agent-chat",
        "AGENT_CLIENT_SECRET": AGENT_CLIENT_SECRET,
        "SEED_ADMIN_PASSWORD": PASSWORDS["admin"],
        "SEED_EDITOR_PASSWORD": PASSWORDS["editor"],
        "SEED_VIEWER_PASSWORD": PASSWORDS["viewer"],
        "LOG_LEVEL": "INFO",
        "RETENTION__ENABLED": "false",
        "SUPERSET__STAGING__URL": superset_booting["staging"].url,
        "SUPERSET__STAGING__USERNAME": superset.ADMIN_USER,
        "SUPERSET__STAGING__PASSWORD": superset.ADMIN_PASSWORD,
        "SUPERSET__PRODUCTION__URL": superset_booting["production"].url,
        "SUPERSET__PRODUCTION__USERNAME": superset.ADMIN_USER,
        "SUPERSET__PRODUCTION__PASSWORD": superset.ADMIN_PASSWORD,
        # The tests sync on demand; the interval's own sync runs once, at start.
        "SUPERSET__SYNC_INTERVAL_S": "3600",
    }
    run_cli(["seed"], {**os.environ, **env})
    return env


@dataclass(frozen=True)
class Backend:
    url: str
    log: Path


@pytest.fixture(scope="session")
def ss_backend(
    ss_env: dict[str, str], superset_stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Backend]:
    """The platform's backend, started once the Supersets answer (it syncs at start)."""
    log = tmp_path_factory.mktemp("ss-logs") / "backend.log"
    with serve(["backend"], ss_env, health_path="/readyz", log_path=log) as (base, _proc):
        yield Backend(base, log)


@pytest.fixture(scope="session")
def ss_api(ss_backend: Backend) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=ss_backend.url, timeout=60) as client:
        yield client


@pytest.fixture(scope="session")
def ss_as(ss_api: httpx.Client) -> dict[str, dict[str, str]]:
    """Headers for each demo role of the Superset-configured platform."""
    return {name: bearer(login(ss_api, name, pw)) for name, pw in PASSWORDS.items()}


@pytest.fixture(scope="session")
def synced(ss_api: httpx.Client, ss_as: dict[str, dict[str, str]]) -> dict[str, int]:
    """The staging dashboards synced once; platform dashboard id by Superset title."""
    response = ss_api.post("/api/admin/superset/sync", headers=ss_as["admin"])
    assert response.status_code == 200, response.text
    items = ss_api.get("/api/dashboards", headers=ss_as["viewer"]).json()["items"]
    return {item["title"]: item["id"] for item in items}


@pytest.fixture(scope="session")
def ss_llm() -> Iterator[FakeLLM]:
    llm = FakeLLM().start()
    yield llm
    llm.stop()


@pytest.fixture(scope="session")
def ss_agent(
    ss_env: dict[str, str],
    ss_backend: Backend,
    ss_llm: FakeLLM,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    log = tmp_path_factory.mktemp("ss-agent") / "agent.log"
    with scripted_agent(
        ss_env, backend=ss_backend.url, llm=ss_llm.url, log_path=log, AGENT__MAX_MODEL_CALLS="6"
    ) as base:
        yield base
