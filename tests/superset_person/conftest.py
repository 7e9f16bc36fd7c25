"""Superset as the person: two real Superset instances authenticating people against a real
slapd (`AUTH_LDAP`, python-ldap on their PYTHONPATH), a platform in `SUPERSET__IDENTITY=person`
mode signing the same people in through the same directory.

In staging a role `Regional` sees one dashboard of two (`datasource_access` on the `orders`
dataset, plus Gamma: made through Superset's security API) and a row level security rule keeps
it to the `north` rows. Its own instances, apart from tests/superset's (a module group of its
own, tests/support/groups.py)."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest
from sqlalchemy.engine import make_url

from backend.migrate import upgrade
from tests.conftest import AGENT_CLIENT_SECRET, PASSWORDS, TEST_JWT_SECRET, bearer, login
from tests.fakes.llm_server import FakeLLM
from tests.support import db, slapd, superset, superset_ldap
from tests.support.processes import run_cli, scripted_agent, serve
from tests.support.superset_build import (
    DATABASE_NAME,
    ChartSpec,
    SupersetAdmin,
    fill_warehouse,
)

ROLE_MAP = {"bi-viewers": "viewer", "bi-admins": "admin"}
REGIONAL = f"cn=ss-regional,{slapd.GROUPS}"
SS_ADMINS = f"cn=ss-admins,{slapd.GROUPS}"
ROWS = [("north", 10.0), ("south", 20.0), ("east", 5.0)]
RLS_CLAUSE = "region = 'north'"
ALLOWED, HIDDEN = "Regional sales", "Returns board"
BY_REGION = ChartSpec(
    "Sales by region",
    "table",
    {
        "expressionType": "SIMPLE",
        "column": {"column_name": "amount"},
        "aggregate": "SUM",
        "label": "revenue",
    },
    ["region"],
)


@dataclass(frozen=True)
class Person:
    username: str
    password: str


@dataclass(frozen=True)
class Stack:
    directory: slapd.Directory
    instances: dict[str, superset.Instance]
    database_url: str
    backend: str
    log: Path
    people: dict[str, Person]
    env: dict[str, str]


def _psycopg2(url: str) -> str:
    return make_url(url).set(drivername="postgresql+psycopg2").render_as_string(hide_password=False)


def _person(directory: slapd.Directory, name: str, *groups: str) -> Person:
    uid = f"{name}_{uuid.uuid4().hex[:6]}"
    password = f"Dir-{uuid.uuid4().hex}"
    dn = directory.add_person(uid, password)
    for group in groups:
        directory.add_member(group, dn)
    return Person(uid, password)


def _pvm(admin: SupersetAdmin, permission: str, view: str) -> int:
    page = 0
    while True:
        q = f"(page:{page},page_size:100)"
        body = admin.call("GET", "/api/v1/security/permissions-resources/", params={"q": q})
        for item in body["result"]:
            if item["permission"]["name"] == permission and item["view_menu"]["name"] == view:
                return int(item["id"])
        if len(body["result"]) < 100:
            raise AssertionError(f"no {permission} on {view}")
        page += 1


def _build_staging(admin: SupersetAdmin, warehouse: str) -> None:
    """Two dashboards on two datasets; `Regional` sees `orders` only, its north rows."""
    database_id = admin.database(DATABASE_NAME, _psycopg2(warehouse))
    datasets = {table: admin.dataset(database_id, table) for table in ("orders", "returns")}
    for title, table in ((ALLOWED, "orders"), (HIDDEN, "returns")):
        dashboard = admin.dashboard(title, title.lower().replace(" ", "-"))
        admin.lay_out(dashboard, [admin.chart(BY_REGION, datasets[table], dashboard)])
    role = int(admin.call("POST", "/api/v1/security/roles/", json={"name": "Regional"})["id"])
    view = f"[{DATABASE_NAME}].[orders](id:{datasets['orders']})"
    pvm = _pvm(admin, "datasource_access", view)
    admin.call(
        "POST",
        f"/api/v1/security/roles/{role}/permissions",
        json={"permission_view_menu_ids": [pvm]},
    )
    rule = {
        "name": "north only",
        "filter_type": "Regular",
        "tables": [datasets["orders"]],
        "roles": [role],
        "clause": RLS_CLAUSE,
    }
    admin.call("POST", "/api/v1/rowlevelsecurity/", json=rule)


def _warehouse(admin_url: str) -> str:
    url = db.create_database(admin_url)
    fill_warehouse(url, ROWS)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE returns AS SELECT * FROM orders")
    return url


def _directory_people(directory: slapd.Directory) -> dict[str, Person]:
    for group in ("bi-viewers", "bi-admins", "ss-regional", "ss-admins"):
        directory.add_group(group, [slapd.ROOT_DN])
    return {
        "alice": _person(directory, "alice", "bi-viewers", "ss-regional"),
        "dora": _person(directory, "dora", "bi-admins", "ss-regional"),
        "carl": _person(directory, "carl", "ss-regional"),  # no platform group
    }


def _platform_env(
    database_url: str, data_dir: Path, directory: slapd.Directory, instances: dict
) -> dict[str, str]:
    env = {
        "ENV": "development",
        "DATABASE_URL": database_url,
        "DATA_DIR": str(data_dir),
        "JWT_SECRET": TEST_JWT_SECRET,
        "AGENT_CLIENT_ID": "agent-chat",
        "AGENT_CLIENT_SECRET": AGENT_CLIENT_SECRET,
        "SEED_ADMIN_PASSWORD": PASSWORDS["admin"],
        "SEED_EDITOR_PASSWORD": PASSWORDS["editor"],
        "SEED_VIEWER_PASSWORD": PASSWORDS["viewer"],
        "LOG_LEVEL": "INFO",
        "RETENTION__ENABLED": "false",
        "LDAP__URL": directory.url,
        "LDAP__BIND_DN": slapd.BIND_DN,
        "LDAP__BIND_PASSWORD": slapd.BIND_PASSWORD,
        "LDAP__USER_BASE": slapd.PEOPLE,
        "LDAP__GROUP_BASE": slapd.GROUPS,
        "AUTH__ROLE_MAP": json.dumps(ROLE_MAP),
        "SUPERSET__IDENTITY": "person",
        "SUPERSET__SYNC_INTERVAL_S": "3600",
    }
    for name, instance in instances.items():
        env[f"SUPERSET__{name.upper()}__URL"] = instance.url
        env[f"SUPERSET__{name.upper()}__USERNAME"] = superset.ADMIN_USER
        env[f"SUPERSET__{name.upper()}__PASSWORD"] = superset.ADMIN_PASSWORD
    return env


@pytest.fixture(scope="session")
def person_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    if reason := slapd.missing():
        pytest.skip(reason)
    admin_url = db.server_url()
    try:
        venv = superset.venv()
        ldap_dir = superset_ldap.python_ldap(venv)
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"Superset venv or python-ldap could not be built: {exc.stderr[-300:]}")
    work = tmp_path_factory.mktemp("superset-person")
    template = superset.template(admin_url, venv, work / "template")
    with slapd.running_slapd(work / "slapd", memberof=True) as directory:
        people = _directory_people(directory)
        extra = (
            superset_ldap.config(
                directory.url, {REGIONAL: ["Gamma", "Regional"], SS_ADMINS: ["Admin"]}
            )
            + "FAB_ADD_SECURITY_API = True\n"
        )
        names = ("staging", "production")
        with superset.serve(
            admin_url,
            venv,
            template,
            work,
            names,
            wait=False,
            extra_config=extra,
            pythonpath=str(ldap_dir),
        ) as instances:
            database_url = db.create_database(admin_url)
            warehouses = [_warehouse(admin_url), _warehouse(admin_url)]
            try:
                upgrade(database_url)
                env = _platform_env(database_url, work / "data", directory, instances)
                run_cli(["seed"], {**os.environ, **env})
                for instance in instances.values():
                    instance.wait()
                staging = SupersetAdmin(
                    instances["staging"].url, superset.ADMIN_USER, superset.ADMIN_PASSWORD
                )
                production = SupersetAdmin(
                    instances["production"].url, superset.ADMIN_USER, superset.ADMIN_PASSWORD
                )
                _build_staging(staging, warehouses[0])
                production.database(DATABASE_NAME, _psycopg2(warehouses[1]))
                staging.close()
                production.close()
                log = work / "backend.log"
                with serve(["backend"], env, health_path="/readyz", log_path=log) as (base, _):
                    yield Stack(directory, instances, database_url, base, log, people, env)
            finally:
                for url in [database_url, *warehouses]:
                    db.drop_database(admin_url, url)


@pytest.fixture(scope="session")
def api(person_stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=person_stack.backend, timeout=60) as client:
        yield client


@pytest.fixture(scope="session")
def person_llm() -> Iterator[FakeLLM]:
    llm = FakeLLM().start()
    yield llm
    llm.stop()


@pytest.fixture(scope="session")
def person_agent(
    person_stack: Stack, person_llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The platform's agent on that backend (its tools and its MCP server)."""
    log = tmp_path_factory.mktemp("person-agent") / "agent.log"
    with scripted_agent(
        person_stack.env, backend=person_stack.backend, llm=person_llm.url, log_path=log,
        AGENT__MAX_MODEL_CALLS="6",
    ) as base:  # fmt: skip
        yield base


@pytest.fixture(scope="session")
def synced(api: httpx.Client) -> None:
    """The platform's dashboards synced from staging (the service account's view: both)."""
    admin = bearer(login(api, "admin", PASSWORDS["admin"]))
    response = api.post("/api/admin/superset/sync", headers=admin)
    assert response.status_code == 200, response.text
    assert response.json()["dashboards"] == 2
