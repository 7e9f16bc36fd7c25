"""A client that goes away cancels its query on the database: the statement does not run on to
the statement timeout (2 s in the suite), and an audited read records the cancellation."""

from __future__ import annotations

import time
import uuid

import httpx
import psycopg
import pytest


def sleeping(warehouse_url: str) -> int:
    with psycopg.connect(warehouse_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND state = 'active' AND wait_event = 'PgSleep'"
        ).fetchone()
    return int(row[0]) if row else 0


def test_a_disconnected_client_cancels_its_statement_and_the_read_is_audited_cancelled(
    backend_url, as_agent, warehouse_url, sql
):
    run_id = f"run-{uuid.uuid4().hex[:12]}"
    headers = {**as_agent["viewer"], "X-Run-Id": run_id}
    body = {"sql": "SELECT pg_sleep(1.8) AS slept"}

    with httpx.Client(base_url=backend_url) as client, pytest.raises(httpx.ReadTimeout):
        client.post("/api/datasources/warehouse/query", json=body, headers=headers, timeout=0.8)

    # Either way the statement is gone by 1.8 s; only a cancel writes CANCELLED, a statement
    # left to finish would be a success row.
    deadline = time.monotonic() + 10
    while not (rows := _audit(sql, run_id)):
        assert time.monotonic() < deadline, "no audit row of the read"
        time.sleep(0.05)
    assert rows == [("failure", "CANCELLED")]
    assert sleeping(warehouse_url) == 0


def _audit(sql, run_id: str) -> list[tuple[str, str]]:
    return sql.execute(
        "SELECT outcome, details->>'code' FROM assistant_audit "
        "WHERE action = 'datasource.query' AND details->>'run_id' = %s",
        (run_id,),
    ).fetchall()
