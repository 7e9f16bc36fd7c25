"""The contract's "Superset environments (backend)", black-box against two real Superset
instances: sync, search, health with Superset's own message, branches and a deploy to
production by the safe promotion, RBAC, and the service account's password kept secret."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import psycopg

from tests.backend.support import assert_error
from tests.superset.conftest import PRODUCTION_ROWS, STAGING_ROWS, Backend, Stack
from tests.support import superset
from tests.support.superset_build import BROKEN, GOOD


def _sync(api: httpx.Client, headers: dict[str, str]) -> dict[str, Any]:
    response = api.post("/api/admin/superset/sync", headers=headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


def _dashboard(api: httpx.Client, headers: dict[str, str], dashboard_id: int) -> dict[str, Any]:
    response = api.get(f"/api/dashboards/{dashboard_id}", headers=headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


def _chart_titles(admin: Any, dashboard_uuid: str) -> dict[str, str]:
    """Chart UUID -> its title in that Superset, for the charts the dashboard places."""
    body = admin.call("GET", f"/api/v1/dashboard/{dashboard_uuid}")["result"]
    position = json.loads(body["position_json"])
    ids = {
        node["meta"]["uuid"]: node["meta"]["chartId"]
        for node in position.values()
        if isinstance(node, dict) and node.get("type") == "CHART"
    }
    return {
        uuid: admin.call("GET", f"/api/v1/chart/{chart_id}")["result"]["slice_name"]
        for uuid, chart_id in ids.items()
    }


def test_sync_reads_every_staging_dashboard_and_keeps_ids_across_syncs(
    ss_api, ss_as, superset_stack: Stack, synced
):
    again = _sync(ss_api, ss_as["admin"])
    charts = sum(len(spec.charts) for spec in (GOOD, BROKEN))
    assert again == {"dashboards": 2, "charts": charts, "created": 0, "changed": 0}
    page = ss_api.get("/api/dashboards", headers=ss_as["viewer"]).json()
    assert page["total"] == 2  # Superset's dashboards, not the demo domain's
    by_title = {item["title"]: item for item in page["items"]}
    assert {t: i["id"] for t, i in by_title.items()} == synced
    good = _dashboard(ss_api, ss_as["viewer"], synced[GOOD.title])
    source = good["source"]
    assert source["kind"] == "superset" and len(source["uuid"]) == 36
    staging = source["environments"]["staging"]
    assert staging["id"] == superset_stack.staging_ids[GOOD.slug]
    assert staging["url"] == f"{superset_stack.staging.url}/superset/dashboard/{staging['id']}/"
    never_deployed = _dashboard(ss_api, ss_as["viewer"], synced[BROKEN.title])["source"]
    assert never_deployed["environments"]["production"] is None
    assert [c["title"] for c in good["main"]["definition"]["charts"]] == [
        c.title for c in GOOD.charts
    ]
    assert good["environments"]["staging"]["version_id"] == good["main_version_id"]


def test_a_viewer_cannot_sync(ss_api, ss_as):
    response = ss_api.post("/api/admin/superset/sync", headers=ss_as["viewer"])
    assert_error(response, 403, "FORBIDDEN")


def test_search_finds_superset_dashboards_by_title_and_chart_title(ss_api, ss_as, synced):
    by_title = ss_api.get("/api/dashboards", params={"query": "discount"}, headers=ss_as["viewer"])
    assert [i["id"] for i in by_title.json()["items"]] == [synced[BROKEN.title]]
    by_chart = ss_api.get("/api/dashboards", params={"query": "revenue"}, headers=ss_as["viewer"])
    assert [i["id"] for i in by_chart.json()["items"]] == [synced[GOOD.title]]


def test_a_chart_superset_cannot_run_is_failing_with_supersets_own_message(
    ss_api, ss_as, synced, ss_database_url
):
    broken = synced[BROKEN.title]
    response = ss_api.get(f"/api/dashboards/{broken}/health", headers=ss_as["viewer"])
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "failing"
    charts = {c["chart_title"]: c for c in body["latest_run"]["charts"]}
    assert charts["Orders per region"]["status"] == "ok"
    failing = charts["Discounts by region"]
    assert failing["status"] == "failing"
    assert failing["error"]["code"] == "SUPERSET_CHART_ERROR"
    # Superset's own words about the missing column, bounded, no stack trace.
    assert "discount" in failing["error"]["message"] and "Traceback" not in failing["message"]
    assert len(failing["error"]["message"]) <= 500
    failing_now = ss_api.get(
        "/api/dashboards", params={"status": "failing"}, headers=ss_as["viewer"]
    )
    assert [i["id"] for i in failing_now.json()["items"]] == [broken]
    good = ss_api.get(f"/api/dashboards/{synced[GOOD.title]}/health", headers=ss_as["viewer"])
    assert good.json()["status"] == "ok"
    # The failure is an operational log too: evidence the diagnosis mode's query_logs can cite.
    with psycopg.connect(ss_database_url) as conn:
        logs = conn.execute(
            "SELECT message FROM operational_logs WHERE dashboard_id = %s AND level = 'error'",
            (broken,),
        ).fetchall()
    assert logs and all("Discounts by region" in m and "discount" in m for (m,) in logs)


def test_a_failing_superset_dashboard_is_not_deployed(ss_api, ss_as, superset_stack, synced):
    prod = superset_stack.admin("production")
    try:
        before = prod.call("GET", "/api/v1/dashboard/")["count"]
        response = ss_api.post(
            f"/api/dashboards/{synced[BROKEN.title]}/deployments",
            json={"ref": "main", "environment": "production"},
            headers=ss_as["admin"],
        )
        error = assert_error(response, 409, "VALIDATION_FAILED")
        assert [c["title"] for c in error["details"]["failing_charts"]] == ["Discounts by region"]
        assert prod.call("GET", "/api/v1/dashboard/")["count"] == before
    finally:
        prod.close()


def test_the_backend_syncs_on_its_own_at_start(ss_database_url, ss_backend):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with psycopg.connect(ss_database_url) as conn:
            row = conn.execute(
                "SELECT details FROM assistant_audit WHERE action = 'superset.sync'"
                " AND actor_username = 'superset-sync' ORDER BY id LIMIT 1"
            ).fetchone()
        if row:
            assert row[0]["dashboards"] == 2
            return
        time.sleep(0.5)
    raise AssertionError("no sync of its own within 60 s")


def test_chart_data_comes_from_supersets_chart_data_api(ss_api, ss_as, synced):
    good = _dashboard(ss_api, ss_as["viewer"], synced[GOOD.title])
    chart = good["main"]["definition"]["charts"][0]
    response = ss_api.get(
        f"/api/dashboards/{good['id']}/charts/{chart['key']}/data", headers=ss_as["viewer"]
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["columns"] == ["region", "revenue"]
    assert sorted(row[0] for row in body["rows"]) == sorted(r for r, _ in STAGING_ROWS)


def test_a_changed_staging_dashboard_becomes_a_new_version_of_main(
    ss_api, ss_as, superset_stack: Stack, synced
):
    broken = synced[BROKEN.title]
    before = _dashboard(ss_api, ss_as["viewer"], broken)
    admin = superset_stack.admin("staging")
    try:
        admin.call(
            "PUT",
            f"/api/v1/dashboard/{superset_stack.staging_ids[BROKEN.slug]}",
            json={"dashboard_title": "Discount watch v2"},
        )
    finally:
        admin.close()
    assert _sync(ss_api, ss_as["admin"])["changed"] == 1
    after = _dashboard(ss_api, ss_as["viewer"], broken)
    assert after["id"] == broken and after["title"] == "Discount watch v2"
    assert after["main_version_id"] != before["main_version_id"]
    assert after["main"]["parent_version_id"] == before["main_version_id"]
    assert after["source"]["uuid"] == before["source"]["uuid"]


def _retitle(ss_api: httpx.Client, ss_as: dict[str, dict[str, str]], dashboard_id: int) -> dict:
    """An editor's branch retitling the dashboard and its first chart; the branch's read."""
    good = _dashboard(ss_api, ss_as["viewer"], dashboard_id)
    chart = good["main"]["definition"]["charts"][0]
    branch = ss_api.post(
        f"/api/dashboards/{dashboard_id}/branches",
        json={"name": "retitle"},
        headers=ss_as["editor"],
    )
    assert branch.status_code == 201, branch.text
    changes = [
        {"op": "update", "key": "dashboard", "chart": {"title": "Orders overview (EU)"}},
        {"op": "update", "key": chart["key"], "chart": {"title": "Revenue per region"}},
    ]
    commit = ss_api.post(
        f"/api/branches/{branch.json()['id']}/commits",
        json={"message": "Clearer titles", "changes": changes},
        headers=ss_as["editor"],
    )
    assert commit.status_code == 201, commit.text
    charts = commit.json()["version"]["definition"]["charts"]
    assert charts[0]["title"] == "Revenue per region"
    return {"chart": chart, "version_id": commit.json()["version"]["id"], **good}


def test_a_commit_cannot_remove_a_chart_the_superset_dashboard_lacks(ss_api, ss_as, synced):
    dashboard_id = synced[BROKEN.title]
    branch = ss_api.post(
        f"/api/dashboards/{dashboard_id}/branches",
        json={"name": "sql-edit"},
        headers=ss_as["editor"],
    ).json()
    response = ss_api.post(
        f"/api/branches/{branch['id']}/commits",
        json={"message": "m", "changes": [{"op": "remove", "key": "anything"}]},
        headers=ss_as["editor"],
    )
    assert_error(response, 422, "INVALID_DEFINITION")


def test_an_editor_cannot_deploy_to_production(ss_api, ss_as, superset_stack: Stack, synced):
    admin = superset_stack.admin("production")
    try:
        before = admin.call("GET", "/api/v1/dashboard/")["count"]
        for role in ("editor", "viewer"):
            response = ss_api.post(
                f"/api/dashboards/{synced[GOOD.title]}/deployments",
                json={"ref": "main", "environment": "production"},
                headers=ss_as[role],
            )
            assert_error(response, 403, "FORBIDDEN")
        assert admin.call("GET", "/api/v1/dashboard/")["count"] == before
    finally:
        admin.close()


def test_a_deploy_to_production_runs_on_productions_data_with_the_committed_titles(
    ss_api, ss_as, superset_stack: Stack, synced, ss_database_url
):
    dashboard_id = synced[GOOD.title]
    committed = _retitle(ss_api, ss_as, dashboard_id)
    prod = superset_stack.admin("production")
    try:
        connection_before = prod.call(
            "GET", f"/api/v1/database/{superset_stack.production_database_id}/connection"
        )["result"]
        response = ss_api.post(
            f"/api/dashboards/{dashboard_id}/deployments",
            json={"ref": "retitle", "environment": "production"},
            headers=ss_as["admin"],
        )
        assert response.status_code == 201, response.text
        assert response.json()["version_id"] == committed["version_id"]
        uuid = committed["source"]["uuid"]
        deployed = prod.call("GET", f"/api/v1/dashboard/{uuid}")["result"]
        assert deployed["dashboard_title"] == "Orders overview (EU)"
        titles = _chart_titles(prod, uuid)
        assert titles[committed["chart"]["uuid"]] == "Revenue per region"
        # The production connection is untouched: same database, same URI, still one database.
        connection_after = prod.call(
            "GET", f"/api/v1/database/{superset_stack.production_database_id}/connection"
        )["result"]
        for key in ("uuid", "database_name", "sqlalchemy_uri"):
            assert connection_after[key] == connection_before[key]
        assert prod.call("GET", "/api/v1/database/")["count"] == 1
    finally:
        prod.close()
    # Its charts run in production, on production's rows.
    data = ss_api.get(
        f"/api/dashboards/{dashboard_id}/charts/{committed['chart']['key']}/data",
        params={"environment": "production"},
        headers=ss_as["viewer"],
    )
    assert data.status_code == 200, data.text
    assert sorted(r[0] for r in data.json()["rows"]) == sorted(r for r, _ in PRODUCTION_ROWS)
    health = ss_api.get(
        f"/api/dashboards/{dashboard_id}/health",
        params={"environment": "production"},
        headers=ss_as["viewer"],
    ).json()
    assert health["status"] == "ok" and health["version_id"] == committed["version_id"]
    after = _dashboard(ss_api, ss_as["viewer"], dashboard_id)
    assert after["environments"]["production"]["version_id"] == committed["version_id"]
    production = after["source"]["environments"]["production"]
    assert production["url"].startswith(superset_stack.production.url)
    with psycopg.connect(ss_database_url) as conn:
        rows = conn.execute(
            "SELECT actor_username, outcome FROM assistant_audit WHERE action = 'dashboard.deploy'"
            " AND resource_id = %s",
            (str(dashboard_id),),
        ).fetchall()
    assert ("admin", "success") in rows


def test_the_service_accounts_password_is_in_no_answer_log_or_row(
    ss_api, ss_as, ss_backend: Backend, synced, ss_database_url
):
    secret = superset.ADMIN_PASSWORD
    answers = [
        ss_api.get("/api/dashboards", headers=ss_as["admin"]).text,
        ss_api.post("/api/admin/superset/sync", headers=ss_as["admin"]).text,
        ss_api.get("/openapi.json").text,
    ]
    for dashboard_id in synced.values():
        answers.append(ss_api.get(f"/api/dashboards/{dashboard_id}", headers=ss_as["admin"]).text)
        answers.append(
            ss_api.get(f"/api/dashboards/{dashboard_id}/health", headers=ss_as["admin"]).text
        )
    answers.append(ss_api.get("/api/audit", headers=ss_as["admin"]).text)
    assert all(secret not in text for text in answers)
    assert secret not in ss_backend.log.read_text()
    with psycopg.connect(ss_database_url) as conn:
        dumped = conn.execute(
            "SELECT (SELECT coalesce(string_agg(details::text, ''), '') FROM assistant_audit)"
            " || (SELECT coalesce(string_agg(definition::text, ''), '') FROM dashboard_versions)"
            " || (SELECT coalesce(string_agg(message, ''), '') FROM dashboard_chart_results)"
        ).fetchone()[0]
    assert secret not in dumped
    # The bundle keeps no connection string either.
    assert "sqlalchemy_uri" not in dumped
