"""The demo `sample` datasource: realistic, deterministic, idempotent."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from backend.datasources.seed import SEED_VERSION, ensure_sample_db


def counts(path: Path) -> dict[str, int]:
    with closing(sqlite3.connect(path)) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def test_the_seeded_sample_file_holds_the_demo_shop(sample_db):
    found = counts(sample_db)
    assert {k: found[k] for k in ("customers", "products", "orders", "events")} == {
        "customers": 1000,
        "products": 100,
        "orders": 5000,
        "events": 8000,
    }
    assert 11_000 <= found["order_items"] <= 13_000


def test_the_demo_shop_lacks_what_the_broken_dashboards_reference(tmp_path):
    path = tmp_path / "sample.db"
    ensure_sample_db(path)
    with closing(sqlite3.connect(path)) as conn:
        event_columns = [r[1] for r in conn.execute("PRAGMA table_info(events)")]
    assert "campaign_id" not in event_columns and "utm_campaign" in event_columns
    assert "inventory_snapshots" not in counts(path)


def test_order_totals_match_their_items_and_every_reference_resolves(sample_db):
    with closing(sqlite3.connect(sample_db)) as conn:
        mismatched = conn.execute(
            "SELECT count(*) FROM orders o JOIN (SELECT order_id, sum(quantity * unit_price) s "
            "FROM order_items GROUP BY order_id) i ON i.order_id = o.id "
            "WHERE abs(o.total_amount - i.s) > 0.011"
        ).fetchone()
        orphans = conn.execute(
            "SELECT (SELECT count(*) FROM orders WHERE customer_id NOT IN "
            "(SELECT id FROM customers)) + (SELECT count(*) FROM order_items WHERE product_id "
            "NOT IN (SELECT id FROM products))"
        ).fetchone()
        statuses = {r[0] for r in conn.execute("SELECT DISTINCT status FROM orders")}
    assert mismatched == (0,) and orphans == (0,)
    assert {"completed", "shipped", "cancelled", "refunded", "pending"} == statuses


def test_two_builds_hold_identical_data(tmp_path):
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    ensure_sample_db(first)
    ensure_sample_db(second)
    with closing(sqlite3.connect(first)) as a, closing(sqlite3.connect(second)) as b:
        assert list(a.iterdump()) == list(b.iterdump())


def test_building_again_keeps_the_file_and_an_outdated_file_is_rebuilt(tmp_path):
    path = tmp_path / "sample.db"
    assert ensure_sample_db(path) is True
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE inventory_snapshots (id INTEGER)")  # an applied migration
        conn.commit()
    assert ensure_sample_db(path) is False
    assert "inventory_snapshots" in counts(path)

    with closing(sqlite3.connect(path)) as conn:
        conn.execute(f"PRAGMA user_version = {SEED_VERSION - 1}")
        conn.commit()
    assert ensure_sample_db(path) is True
    assert "inventory_snapshots" not in counts(path)
    assert not (tmp_path / "sample.db.building").exists()
