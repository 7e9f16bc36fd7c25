"""Fixtures of the dashboard tests: dedicated dashboards, so tests that change what main or an
environment points at never disturb the seeded demo set other tests read."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from psycopg.types.json import Jsonb

from tests.backend.support import scalar

MakeDashboard = Callable[..., int]
FIRST_SCRATCH_ID = 10_000

GOOD_SQL = "SELECT status, COUNT(*) AS orders FROM orders GROUP BY status"
BROKEN_SQL = "SELECT campaign_id, COUNT(*) AS conversions FROM events GROUP BY campaign_id"


def chart(
    key: str, sql: str = GOOD_SQL, expected: list[str] | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "key": key,
        "title": extra.pop("title", key.replace("_", " ").capitalize()),
        "type": extra.pop("type", "bar"),
        "datasource": extra.pop("datasource", "sample"),
        "sql": sql,
        "expected_columns": ["status", "orders"] if expected is None else expected,
        **extra,
    }


def _insert(sql: psycopg.Connection, charts: list[dict[str, Any]], title: str, deploy: bool) -> int:
    dashboard_id = scalar(
        sql, "SELECT greatest(coalesce(max(id), 0) + 1, %s) FROM dashboards", FIRST_SCRATCH_ID
    )
    sql.execute(
        "INSERT INTO dashboards (id, title, description, tags, owner, created_at, updated_at) "
        "VALUES (%s, %s, 'scratch dashboard of a test', %s, 'tests', now(), now())",
        (dashboard_id, title, Jsonb(["scratch"])),
    )
    version_id = scalar(
        sql,
        "INSERT INTO dashboard_versions (dashboard_id, definition, author, message, created_at) "
        "VALUES (%s, %s, 'tests', 'Initial version', now()) RETURNING id",
        dashboard_id,
        Jsonb({"charts": charts}),
    )
    sql.execute(
        "UPDATE dashboards SET main_version_id = %s WHERE id = %s", (version_id, dashboard_id)
    )
    for environment in ("staging", "production") if deploy else ():
        deployment_id = scalar(
            sql,
            "INSERT INTO dashboard_deployments (dashboard_id, environment, version_id, ref, "
            "forced, deployed_by, deployed_at) VALUES (%s, %s, %s, 'main', false, 'tests', now()) "
            "RETURNING id",
            dashboard_id,
            environment,
            version_id,
        )
        sql.execute(
            "INSERT INTO dashboard_environments (dashboard_id, environment, version_id, "
            "deployment_id) VALUES (%s, %s, %s, %s)",
            (dashboard_id, environment, version_id, deployment_id),
        )
    return int(dashboard_id)


@pytest.fixture()
def make_dashboard(sql: psycopg.Connection, seeded: dict[str, str]) -> MakeDashboard:
    """Insert a dashboard of our own (main = one version; deployed to both environments)."""

    def make(
        charts: list[dict[str, Any]] | None = None, *, title: str = "Scratch", deploy: bool = True
    ) -> int:
        return _insert(sql, charts if charts is not None else [chart("by_status")], title, deploy)

    return make


@pytest.fixture()
def sample_has_table(data_dir: Path) -> Callable[[str], bool]:
    """Whether the sample SQLite datasource has `table` now (a datasource migration adds one)."""

    def check(table: str) -> bool:
        uri = f"file:{data_dir / 'sample.db'}?mode=ro"
        with closing(sqlite3.connect(uri, uri=True)) as conn:
            row = conn.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone()
        return bool(row[0])

    return check


@pytest.fixture()
def inventory_pending(
    api: httpx.Client,
    as_user: dict[str, dict[str, str]],
    sql: psycopg.Connection,
    data_dir: Path,
) -> Iterator[None]:
    """The seeded state before and after the test: the inventory migration pending and
    dashboard 23's latest validation failing (other suites expect a failing demo)."""

    def reset() -> None:
        with closing(sqlite3.connect(data_dir / "sample.db")) as conn:
            conn.executescript(
                "DROP TABLE IF EXISTS inventory_snapshots;"
                "DROP INDEX IF EXISTS ix_inventory_snapshots_product_date;"
            )
        sql.execute(
            "DELETE FROM datasource_migrations WHERE datasource = 'sample' "
            "AND migration_id = '20261101_inventory_snapshots'"
        )

    reset()
    yield
    reset()
    response = api.post("/api/dashboards/23/validate", headers=as_user["viewer"])
    assert response.json()["status"] == "failing", response.text
