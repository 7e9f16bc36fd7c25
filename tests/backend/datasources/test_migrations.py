"""Shipped datasource migrations: listing, applying once (admin), refusing a second apply,
and rolling back a failure with nothing recorded but the audit and log rows."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing

import httpx
import psycopg
import pytest

from tests.backend.support import assert_error, audit_rows

INVENTORY = "20261101_inventory_snapshots"
ORDER_DATE_INDEX = "20261115_orders_order_date_index"


def apply_path(migration_id: str, datasource: str = "sample") -> str:
    return f"/api/datasources/{datasource}/migrations/{migration_id}/apply"


def listed(api: httpx.Client, headers: dict[str, str], datasource: str = "sample") -> dict:
    response = api.get(f"/api/datasources/{datasource}/migrations", headers=headers)
    assert response.status_code == 200, response.text
    return {item["id"]: item for item in response.json()["items"]}


def last_ids(sql: psycopg.Connection) -> tuple[int, int]:
    """The newest audit and operational log ids: rows after them belong to this test."""
    row = sql.execute(
        "SELECT (SELECT coalesce(max(id), 0) FROM assistant_audit),"
        " (SELECT coalesce(max(id), 0) FROM operational_logs)"
    ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def test_the_sample_datasource_ships_two_pending_migrations(api, as_user, pending_sample):
    items = listed(api, as_user["viewer"])
    assert list(items) == [INVENTORY, ORDER_DATE_INDEX]
    inventory = items[INVENTORY]
    assert inventory["status"] == "pending"
    assert inventory["applied_by"] is None and inventory["applied_at"] is None
    assert inventory["description"].startswith("Weekly inventory snapshots")
    assert len(inventory["checksum"]) == 64


def test_a_datasource_without_shipped_migrations_lists_none(api, as_user, warehouse):
    response = api.get("/api/datasources/warehouse/migrations", headers=as_user["viewer"])
    assert response.json() == {"datasource": "warehouse", "items": []}


def test_applying_a_migration_creates_the_table_records_who_and_refuses_a_second_apply(
    api, as_user, sql, pending_sample
):
    audit_mark, log_mark = last_ids(sql)
    response = api.post(apply_path(INVENTORY), headers=as_user["admin"])
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["id"], body["status"], body["applied_by"]) == (INVENTORY, "applied", "admin")
    assert body["applied_at"]

    rows = api.post(
        "/api/datasources/sample/query",
        json={"sql": "SELECT count(*), count(DISTINCT product_id) FROM inventory_snapshots"},
        headers=as_user["viewer"],
    )
    assert rows.json()["rows"] == [[400, 100]]
    assert listed(api, as_user["viewer"])[INVENTORY]["applied_by"] == "admin"
    recorded = sql.execute(
        "SELECT applied_by FROM datasource_migrations WHERE datasource = 'sample' "
        "AND migration_id = %s",
        (INVENTORY,),
    ).fetchall()
    assert recorded == [("admin",)]
    audits = [a for a in audit_rows(sql, resource_id=f"sample/{INVENTORY}") if a["id"] > audit_mark]
    assert [(a["action"], a["outcome"], a["actor_username"]) for a in audits] == [
        ("datasource.migration.apply", "success", "admin")
    ]
    logged = sql.execute(
        "SELECT level, message FROM operational_logs WHERE source = 'datasources' "
        "AND details->>'migration_id' = %s AND id > %s",
        (INVENTORY, log_mark),
    ).fetchall()
    assert logged == [("info", f"Migration {INVENTORY} on datasource sample applied by admin")]

    again = api.post(apply_path(INVENTORY), headers=as_user["admin"])
    error = assert_error(again, 409, "CONFLICT")
    assert error["details"] == {"datasource": "sample", "migration_id": INVENTORY}


def test_two_simultaneous_applies_run_the_migration_once(
    backend_url, as_user, as_agent, sql, pending_sample
):
    def apply(headers: dict[str, str]) -> int:
        with httpx.Client(base_url=backend_url, timeout=30) as client:
            return client.post(apply_path(ORDER_DATE_INDEX), headers=headers).status_code

    with ThreadPoolExecutor(2) as pool:
        statuses = sorted(pool.map(apply, [as_user["admin"], as_agent["admin"]]))
    assert statuses == [200, 409]
    count = sql.execute(
        "SELECT count(*) FROM datasource_migrations WHERE migration_id = %s", (ORDER_DATE_INDEX,)
    ).fetchone()
    assert count == (1,)
    with closing(sqlite3.connect(pending_sample)) as conn:
        index = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'ix_orders_order_date'"
        ).fetchone()
    assert index is not None and "order_date" in index[0]


def test_a_failing_migration_rolls_back_and_records_only_a_failed_audit_row(
    api, as_user, sql, pending_sample
):
    audit_mark, _ = last_ids(sql)
    # Drift: an index of the migration's name already exists, so its last statement fails
    # after the CREATE TABLE and the INSERT have run.
    with closing(sqlite3.connect(pending_sample)) as conn:
        conn.execute("CREATE INDEX ix_inventory_snapshots_product_date ON products (id)")
    response = api.post(apply_path(INVENTORY), headers=as_user["admin"])
    error = assert_error(response, 422, "MIGRATION_FAILED")
    assert "rolled back" in error["message"] and "already exists" in error["message"]

    with closing(sqlite3.connect(pending_sample)) as conn:
        table = conn.execute(
            "SELECT name FROM sqlite_master WHERE name = 'inventory_snapshots'"
        ).fetchone()
    assert table is None
    assert listed(api, as_user["viewer"])[INVENTORY]["status"] == "pending"
    assert sql.execute(
        "SELECT count(*) FROM datasource_migrations WHERE datasource = 'sample'"
    ).fetchone() == (0,)
    audits = [
        a
        for a in audit_rows(sql, resource_id=f"sample/{INVENTORY}", outcome="failure")
        if a["id"] > audit_mark
    ]
    assert len(audits) == 1 and "already exists" in audits[0]["details"]["error"]
    level = sql.execute(
        "SELECT level FROM operational_logs WHERE source = 'datasources' "
        "AND details->>'migration_id' = %s ORDER BY id DESC LIMIT 1",
        (INVENTORY,),
    ).fetchone()
    assert level == ("error",)


@pytest.mark.parametrize("role", ["viewer", "editor"])
def test_only_an_admin_applies_migrations(api, as_user, as_agent, sql, pending_sample, role):
    for headers in (as_user[role], as_agent[role]):
        error = assert_error(api.post(apply_path(INVENTORY), headers=headers), 403, "FORBIDDEN")
        assert "admin" in error["message"]
    assert listed(api, as_user["viewer"])[INVENTORY]["status"] == "pending"


def test_applying_needs_a_login(api):
    assert_error(api.post(apply_path(INVENTORY)), 401, "UNAUTHORIZED")


def test_an_unknown_migration_is_404(api, as_user):
    error = assert_error(
        api.post(apply_path("20990101_nothing"), headers=as_user["admin"]), 404, "NOT_FOUND"
    )
    assert error["details"] == {"datasource": "sample", "migration_id": "20990101_nothing"}


@pytest.mark.parametrize("bad", ["drop%20table", "20261101_X", "1", "20261101_a.sql"])
def test_a_malformed_migration_id_is_invalid_input(api, as_user, bad):
    response = api.post(f"/api/datasources/sample/migrations/{bad}/apply", headers=as_user["admin"])
    error = assert_error(response, 422, "INVALID_INPUT")
    assert "migration_id" in str(error["details"]["errors"])


def test_a_traversal_in_the_migration_id_matches_no_route(api, as_user):
    response = api.post(
        "/api/datasources/sample/migrations/..%2F..%2Fetc%2Fpasswd/apply", headers=as_user["admin"]
    )
    assert_error(response, 404, "NOT_FOUND")


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/api/datasources/nowhere/migrations"), ("POST", apply_path(INVENTORY, "nowhere"))],
)
def test_migrations_of_an_unknown_datasource_are_404(api, as_user, method, path):
    response = api.request(method, path, headers=as_user["admin"])
    error = assert_error(response, 404, "NOT_FOUND")
    assert error["details"] == {"datasource": "nowhere"}
