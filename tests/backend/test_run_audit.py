"""`X-Run-Id`: the reads an agent run makes as tool calls (logs, knowledge, read-only SQL) are
audited with `details.run_id`, refusals included; other reads are not audited, and a browser's
own calls cannot claim a run."""

from __future__ import annotations

import uuid

import pytest

from tests.backend.support import NewUser, Person, assert_error, audit_rows


@pytest.fixture(scope="module")
def viewer(new_user: NewUser) -> Person:
    return new_user("viewer", prefix="runaudit")


def run_id() -> str:
    return f"run-{uuid.uuid4().hex}"


def rows_of(sql, run: str) -> list[dict]:
    return [r for r in audit_rows(sql) if r["details"].get("run_id") == run]


def test_each_read_of_a_run_leaves_one_audit_row_naming_the_run_and_what_was_asked(
    api, sql, viewer
):
    run = run_id()
    headers = {**viewer.agent, "X-Run-Id": run}

    logs = api.get(
        "/api/logs", params={"query": "campaign_id", "dashboard_id": 17}, headers=headers
    )
    knowledge = api.get("/api/knowledge/search", params={"q": "no such column"}, headers=headers)
    query = api.post(
        "/api/datasources/sample/query", json={"sql": "SELECT 1 AS one"}, headers=headers
    )

    assert logs.status_code == knowledge.status_code == query.status_code == 200
    rows = rows_of(sql, run)
    assert [r["action"] for r in rows] == ["logs.search", "knowledge.search", "datasource.query"]
    assert all(r["outcome"] == "success" for r in rows)
    assert all(str(r["actor_user_id"]) == viewer.id for r in rows)
    assert all(r["service_client_id"] == "agent-chat" for r in rows)
    by_action = {r["action"]: r for r in rows}
    assert by_action["logs.search"]["details"]["query"] == "campaign_id"
    assert (by_action["logs.search"]["resource_type"], by_action["logs.search"]["resource_id"]) == (
        "dashboard",
        "17",
    )
    assert by_action["knowledge.search"]["details"]["q"] == "no such column"
    assert by_action["datasource.query"]["resource_id"] == "sample"
    assert by_action["datasource.query"]["details"]["sql"] == "SELECT 1 AS one"


def test_a_refused_query_of_a_run_is_audited_as_a_failure_with_its_code(api, sql, viewer):
    run = run_id()
    response = api.post(
        "/api/datasources/sample/query",
        json={"sql": "DELETE FROM orders"},
        headers={**viewer.agent, "X-Run-Id": run},
    )

    assert_error(response, 422, "SQL_REJECTED")
    (row,) = rows_of(sql, run)
    assert row["action"] == "datasource.query" and row["outcome"] == "failure"
    assert row["details"]["code"] == "SQL_REJECTED"


def test_reads_outside_a_run_are_not_audited(api, sql, viewer):
    before = len(audit_rows(sql, actor_user_id=viewer.id))

    api.get("/api/logs", params={"query": "deploy"}, headers=viewer.agent)
    api.get("/api/knowledge/search", params={"q": "deploy"}, headers=viewer.headers)
    api.post("/api/datasources/sample/query", json={"sql": "SELECT 1"}, headers=viewer.agent)

    assert len(audit_rows(sql, actor_user_id=viewer.id)) == before


def test_a_browsers_own_call_cannot_claim_a_run(api, sql, viewer):
    run = run_id()

    response = api.get("/api/logs", headers={**viewer.headers, "X-Run-Id": run})

    assert response.status_code == 200
    assert rows_of(sql, run) == []


@pytest.mark.parametrize("bad", ["", "x" * 65, "run id", "run/../1", "run;1"])
def test_a_malformed_run_id_is_refused(api, sql, viewer, bad):
    response = api.get("/api/logs", headers={**viewer.agent, "X-Run-Id": bad})

    assert_error(response, 422, "INVALID_INPUT")
