"""Listing datasources, their tables and columns; table names are validated."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.backend.support import assert_error


def test_datasources_are_listed_without_their_urls(api, as_user, warehouse_url):
    response = api.get("/api/datasources", headers=as_user["viewer"])
    assert response.status_code == 200, response.text
    items = {item["name"]: item for item in response.json()["items"]}
    # conf.yml's sample and the environment's warehouse: env merges with the file's entries.
    assert set(items) >= {"sample", "warehouse"}
    assert items["sample"]["dialect"] == "sqlite"
    assert items["warehouse"]["dialect"] == "postgresql"
    assert items["sample"]["description"].startswith("Demo shop data")
    assert set(items["sample"]) == {"name", "dialect", "description"}
    assert "sqlite:" not in response.text and "postgresql://" not in response.text
    assert warehouse_url.rsplit("/", 1)[-1] not in response.text


def test_listing_datasources_needs_a_login(api):
    assert_error(api.get("/api/datasources"), 401, "UNAUTHORIZED")


def test_the_sample_datasource_lists_the_demo_tables(api, as_user, sample_db):
    response = api.get("/api/datasources/sample/tables", headers=as_user["viewer"])
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["datasource"] == "sample"
    names = [t["name"] for t in body["items"]]
    assert {"customers", "products", "orders", "order_items", "events"} <= set(names)
    assert "inventory_snapshots" not in names
    assert all(t["kind"] == "table" for t in body["items"])


def test_the_warehouse_lists_its_postgres_tables(api, as_user, warehouse):
    response = api.get("/api/datasources/warehouse/tables", headers=as_user["viewer"])
    assert [t["name"] for t in response.json()["items"]] == ["counters", "customers", "orders"]


def test_columns_of_a_sample_table_come_with_types_and_keys(api, as_user, sample_db):
    response = api.get("/api/datasources/sample/tables/events/columns", headers=as_user["viewer"])
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["datasource"], body["table"]) == ("sample", "events")
    columns = {c["name"]: c for c in body["items"]}
    assert list(columns) == [
        "id",
        "customer_id",
        "event_type",
        "occurred_at",
        "utm_source",
        "utm_campaign",
    ]
    assert "campaign_id" not in columns  # a demo dashboard relies on its absence
    assert columns["id"]["primary_key"] is True
    assert columns["event_type"] == {
        "name": "event_type",
        "type": "TEXT",
        "nullable": False,
        "primary_key": False,
    }


def test_columns_of_a_postgres_table_carry_its_types(api, as_user, warehouse):
    response = api.get(
        "/api/datasources/warehouse/tables/orders/columns", headers=as_user["viewer"]
    )
    columns = {c["name"]: c["type"] for c in response.json()["items"]}
    assert columns == {
        "id": "INTEGER",
        "customer_id": "INTEGER",
        "order_date": "DATE",
        "status": "TEXT",
        "total_amount": "NUMERIC(10, 2)",
    }


@pytest.mark.parametrize(
    "table",
    [
        "orders; drop",
        "orders--",
        '"orders"',
        "pg_catalog.pg_authid",
        "1orders",
        "o" * 64,
        "orders%00",
        "ord ers",
        "..x",
        "é",
    ],
)
def test_a_table_name_that_is_not_a_plain_identifier_is_refused(api, as_user, sample_db, table):
    response = api.get(
        f"/api/datasources/sample/tables/{quote(table, safe='')}/columns",
        headers=as_user["viewer"],
    )
    error = assert_error(response, 422, "INVALID_TABLE_NAME")
    assert "letters, digits and underscores" in error["message"]


def test_a_path_traversal_in_the_table_name_matches_no_route(api, as_user, sample_db):
    response = api.get("/api/datasources/sample/tables/..%2Fx/columns", headers=as_user["viewer"])
    assert_error(response, 404, "NOT_FOUND")


@pytest.mark.parametrize("datasource", ["sample", "warehouse"])
def test_an_unknown_table_is_404_naming_it(api, as_user, warehouse, datasource):
    response = api.get(
        f"/api/datasources/{datasource}/tables/inventory_snapshots_x/columns",
        headers=as_user["viewer"],
    )
    error = assert_error(response, 404, "NOT_FOUND")
    assert error["details"] == {"datasource": datasource, "table": "inventory_snapshots_x"}


@pytest.mark.parametrize(
    "path", ["/api/datasources/nowhere/tables", "/api/datasources/nowhere/tables/orders/columns"]
)
def test_an_unknown_datasource_is_404(api, as_user, path):
    error = assert_error(api.get(path, headers=as_user["viewer"]), 404, "NOT_FOUND")
    assert error["details"] == {"datasource": "nowhere"}
