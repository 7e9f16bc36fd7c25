"""Fixtures of the datasources tests: the `warehouse` Postgres datasource's tables, the `sample`
SQLite file, and fingerprints that show a datasource was left unchanged."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

WAREHOUSE_SCHEMA = """
DROP TABLE IF EXISTS orders, customers, counters CASCADE;
DROP FUNCTION IF EXISTS bump();
CREATE TABLE customers (
    id integer PRIMARY KEY, name text NOT NULL, country text NOT NULL,
    created_at timestamptz NOT NULL);
CREATE TABLE orders (
    id integer PRIMARY KEY, customer_id integer NOT NULL REFERENCES customers (id),
    order_date date NOT NULL, status text NOT NULL, total_amount numeric(10, 2) NOT NULL);
CREATE TABLE counters (name text PRIMARY KEY, n integer NOT NULL);
INSERT INTO customers
SELECT i, 'Customer ' || i, (ARRAY['US', 'DE', 'FR', 'GB'])[1 + i % 4],
       timestamptz '2025-01-01 00:00:00+00' + i * interval '1 day'
FROM generate_series(1, 200) AS i;
INSERT INTO orders
SELECT i, 1 + (i * 7) % 200, date '2025-01-01' + (i % 300),
       (ARRAY['completed', 'completed', 'shipped', 'cancelled'])[1 + i % 4],
       round(((i * 37) % 500 + 10.25)::numeric, 2)
FROM generate_series(1, 1000) AS i;
INSERT INTO counters VALUES ('calls', 0);
-- A function that writes: only the read-only transaction stands between it and the table.
CREATE FUNCTION bump() RETURNS integer LANGUAGE sql VOLATILE AS
    'UPDATE counters SET n = n + 1 RETURNING n';
"""

Query = Callable[..., httpx.Response]


@pytest.fixture(scope="session")
def warehouse(warehouse_url: str) -> str:
    """The warehouse database, filled with small customers/orders tables."""
    with psycopg.connect(warehouse_url, autocommit=True) as conn:
        conn.execute(WAREHOUSE_SCHEMA.encode())
    return warehouse_url


@pytest.fixture(scope="session")
def sample_db(seeded: dict[str, str], data_dir: Path) -> Path:
    """The demo SQLite file `agent-chat seed` built (conf.yml: {data_dir}/sample.db)."""
    path = data_dir / "sample.db"
    assert path.is_file()
    return path


@pytest.fixture()
def query(
    api: httpx.Client, as_user: dict[str, dict[str, str]], warehouse: str, sample_db: Path
) -> Query:
    """POST /api/datasources/{name}/query as the viewer."""

    def run(datasource: str, sql: str, **extra: Any) -> httpx.Response:
        return api.post(
            f"/api/datasources/{datasource}/query",
            json={"sql": sql, **extra},
            headers=as_user["viewer"],
        )

    return run


def sqlite_fingerprint(path: Path) -> list[tuple[Any, ...]]:
    """Schema objects and row counts of a SQLite file."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        objects = conn.execute(
            "SELECT type, name, sql FROM sqlite_master ORDER BY type, name"
        ).fetchall()
        tables = [name for kind, name, _ in objects if kind == "table"]
        counts = [(t, conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()) for t in tables]
    return objects + counts


def postgres_fingerprint(url: str) -> list[tuple[Any, ...]]:
    """Tables, row counts, a checksum of customers and the counter of the warehouse."""
    with psycopg.connect(url, autocommit=True) as conn:
        return list(
            conn.execute(
                "SELECT (SELECT string_agg(table_name, ',' ORDER BY table_name)"
                "        FROM information_schema.tables WHERE table_schema = 'public'),"
                " (SELECT count(*) FROM customers), (SELECT count(*) FROM orders),"
                " (SELECT md5(string_agg(name || country, ',' ORDER BY id)) FROM customers),"
                " (SELECT n FROM counters WHERE name = 'calls')"
            ).fetchall()
        )


@pytest.fixture()
def fingerprint(warehouse: str, sample_db: Path) -> Callable[[str], list[tuple[Any, ...]]]:
    """fingerprint(datasource) -> what would differ if a statement had changed it."""

    def take(datasource: str) -> list[tuple[Any, ...]]:
        if datasource == "sample":
            return sqlite_fingerprint(sample_db)
        return postgres_fingerprint(warehouse)

    return take


@pytest.fixture()
def pending_sample(sample_db: Path, sql: psycopg.Connection) -> Iterator[Path]:
    """The sample datasource with its shipped migrations pending, before and after the test.

    Other suites (the agent's, end-to-end) expect the seeded state, where they are pending.
    """

    def reset() -> None:
        with closing(sqlite3.connect(sample_db)) as conn:
            conn.executescript(
                "DROP TABLE IF EXISTS inventory_snapshots;"
                "DROP INDEX IF EXISTS ix_inventory_snapshots_product_date;"
                "DROP INDEX IF EXISTS ix_orders_order_date;"
            )
        sql.execute("DELETE FROM datasource_migrations WHERE datasource = 'sample'")

    reset()
    yield sample_db
    reset()
