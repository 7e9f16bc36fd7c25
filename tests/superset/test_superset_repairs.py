"""The contract's "Repairs on Superset", black-box against two real Superset instances: chart
edits turned into Superset's own query, checked and run on staging before a commit is stored,
versions by ref with Explore links, and a deploy carrying the new queries, an added and a
removed chart to production by the safe promotion."""

from __future__ import annotations

import json
from typing import Any

import httpx
import psycopg
import pytest

from tests.backend.support import assert_error
from tests.superset.conftest import PRODUCTION_ROWS, STAGING_ROWS, Stack
from tests.support.superset_build import BROKEN

FIX = {"metrics": [{"column": "amount", "aggregate": "SUM", "label": "discounts"}]}


def _broken(api: httpx.Client, headers: dict[str, str], dashboard_id: int) -> dict[str, Any]:
    body = api.get(f"/api/dashboards/{dashboard_id}", headers=headers).json()
    charts = {c["title"]: c for c in body["main"]["definition"]["charts"]}
    return {"body": body, **charts}


def _branch(api: httpx.Client, headers: dict[str, str], dashboard_id: int, name: str) -> int:
    response = api.post(
        f"/api/dashboards/{dashboard_id}/branches", json={"name": name}, headers=headers
    )
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


def _commit(
    api: httpx.Client, headers: dict[str, str], branch_id: int, changes: list[dict[str, Any]]
) -> httpx.Response:
    return api.post(
        f"/api/branches/{branch_id}/commits",
        json={"message": "Repair", "changes": changes},
        headers=headers,
    )


def test_an_edit_makes_the_failing_chart_run_on_its_branch(ss_api, ss_as, synced):
    dashboard_id = synced[BROKEN.title]
    failing = _broken(ss_api, ss_as["viewer"], dashboard_id)["Discounts by region"]
    branch_id = _branch(ss_api, ss_as["editor"], dashboard_id, "fix-discount")
    commit = _commit(
        ss_api, ss_as["editor"], branch_id, [{"op": "update", "key": failing["key"], "chart": FIX}]
    )
    assert commit.status_code == 201, commit.text
    shown = ss_api.get(
        f"/api/dashboards/{dashboard_id}", params={"ref": "fix-discount"}, headers=ss_as["viewer"]
    ).json()
    assert shown["version"]["id"] == commit.json()["version"]["id"]
    chart = next(c for c in shown["version"]["definition"]["charts"] if c["key"] == failing["key"])
    # On staging (as synced): its Explore link there (production's too once a deploy put it there).
    assert "staging" in chart["explore_url"]
    for url in chart["explore_url"].values():
        assert "/explore/?slice_id=" in url
    data = ss_api.get(
        f"/api/dashboards/{dashboard_id}/charts/{failing['key']}/data",
        params={"ref": "fix-discount"},
        headers=ss_as["viewer"],
    )
    assert data.status_code == 200, data.text
    assert data.json()["columns"] == ["region", "discounts"]
    assert {r[0]: float(r[1]) for r in data.json()["rows"]} == dict(STAGING_ROWS)
    # main's chart still fails: the fix lives on the branch until it is deployed.
    main = ss_api.get(
        f"/api/dashboards/{dashboard_id}/charts/{failing['key']}/data", headers=ss_as["viewer"]
    )
    assert main.status_code == 422
    run = ss_api.post(
        f"/api/dashboards/{dashboard_id}/validate",
        json={"ref": "fix-discount"},
        headers=ss_as["viewer"],
    )
    assert run.status_code == 200 and run.json()["status"] == "ok", run.text


BAD_EDITS = {
    "unknown group-by column": ({"groupby": ["country"]}, "country"),
    "unknown filter column": (
        {"filters": [{"column": "country", "op": "==", "value": "x"}]},
        "country",
    ),
    "unknown metric column": (
        {"metrics": [{"column": "discount", "aggregate": "SUM"}]},
        "discount",
    ),
    "unknown saved metric": ({"metrics": ["no_such_metric"]}, "no_such_metric"),
    "unknown viz type": ({"viz_type": "sunburst_v9"}, "sunburst_v9"),
    "bad time range": ({"time_range": "next blue moon"}, "next blue moon"),
}


@pytest.mark.parametrize("case", list(BAD_EDITS))
def test_an_edit_superset_cannot_run_is_refused_and_nothing_is_stored(
    ss_api, ss_as, synced, case: str
):
    dashboard_id = synced[BROKEN.title]
    chart = _broken(ss_api, ss_as["viewer"], dashboard_id)["Orders per region"]
    branch_id = _branch(ss_api, ss_as["editor"], dashboard_id, f"bad-{case.replace(' ', '-')}")
    before = ss_api.get(f"/api/branches/{branch_id}", headers=ss_as["viewer"]).json()
    fields, named = BAD_EDITS[case]
    response = _commit(
        ss_api, ss_as["editor"], branch_id, [{"op": "update", "key": chart["key"], "chart": fields}]
    )
    error = assert_error(response, 422, "VALIDATION_FAILED")
    [refused] = error["details"]["charts"]
    assert refused["key"] == chart["key"] and refused["title"] == "Orders per region"
    assert named in refused["message"] and len(refused["message"]) <= 500
    after = ss_api.get(f"/api/branches/{branch_id}", headers=ss_as["viewer"]).json()
    assert after["head_version_id"] == before["head_version_id"] and not after["commits"]


def test_a_chart_on_an_unknown_dataset_is_refused_with_a_null_key(ss_api, ss_as, synced):
    dashboard_id = synced[BROKEN.title]
    branch_id = _branch(ss_api, ss_as["editor"], dashboard_id, "bad-dataset")
    new = {"title": "Refunds", "viz_type": "table", "dataset": "refunds", "metrics": ["count"]}
    response = _commit(ss_api, ss_as["editor"], branch_id, [{"op": "add", "chart": new}])
    error = assert_error(response, 422, "VALIDATION_FAILED")
    assert error["details"]["charts"][0]["key"] is None
    assert "refunds" in error["details"]["charts"][0]["message"]


def test_a_viewer_cannot_commit_and_an_editor_cannot_deploy_a_repair(ss_api, ss_as, synced):
    dashboard_id = synced[BROKEN.title]
    chart = _broken(ss_api, ss_as["viewer"], dashboard_id)["Discounts by region"]
    branch_id = _branch(ss_api, ss_as["editor"], dashboard_id, "rbac-fix")
    viewer = _commit(
        ss_api, ss_as["viewer"], branch_id, [{"op": "update", "key": chart["key"], "chart": FIX}]
    )
    assert_error(viewer, 403, "FORBIDDEN")
    editor = ss_api.post(
        f"/api/dashboards/{dashboard_id}/deployments",
        json={"ref": "rbac-fix", "environment": "production"},
        headers=ss_as["editor"],
    )
    assert_error(editor, 403, "FORBIDDEN")


def _production_charts(prod: Any, dashboard_uuid: str) -> dict[str, dict[str, Any]]:
    """Chart UUID -> that chart in production, for the charts its dashboard places."""
    body = prod.call("GET", f"/api/v1/dashboard/{dashboard_uuid}")["result"]
    position = json.loads(body["position_json"])
    ids = {
        node["meta"]["uuid"]: node["meta"]["chartId"]
        for node in position.values()
        if isinstance(node, dict) and node.get("type") == "CHART"
    }
    return {uuid: prod.call("GET", f"/api/v1/chart/{i}")["result"] for uuid, i in ids.items()}


def test_a_deployed_repair_runs_the_new_queries_on_productions_rows(
    ss_api, ss_as, superset_stack: Stack, synced, ss_database_url
):
    dashboard_id = synced[BROKEN.title]
    charts = _broken(ss_api, ss_as["viewer"], dashboard_id)
    failing, kept = charts["Discounts by region"], charts["Orders per region"]
    branch_id = _branch(ss_api, ss_as["editor"], dashboard_id, "repair")
    added = {
        "title": "Orders by day",
        "viz_type": "echarts_timeseries_bar",
        "dataset": "orders",
        "metrics": ["count"],
        "time_range": "No filter",
    }
    changes = [
        {"op": "update", "key": failing["key"], "chart": {**FIX, "title": "Amount by region"}},
        {"op": "add", "chart": added},
        {"op": "remove", "key": kept["key"]},
    ]
    commit = _commit(ss_api, ss_as["editor"], branch_id, changes)
    assert commit.status_code == 201, commit.text
    titles = [c["title"] for c in commit.json()["version"]["definition"]["charts"]]
    assert titles == ["Amount by region", "Orders by day"]
    prod = superset_stack.admin("production")
    try:
        db_id = superset_stack.production_database_id
        before = prod.call("GET", f"/api/v1/database/{db_id}/connection")["result"]
        response = ss_api.post(
            f"/api/dashboards/{dashboard_id}/deployments",
            json={"ref": "repair", "environment": "production"},
            headers=ss_as["admin"],
        )
        assert response.status_code == 201, response.text
        uuid = charts["body"]["source"]["uuid"]
        deployed = _production_charts(prod, uuid)
        assert sorted(c["slice_name"] for c in deployed.values()) == titles
        assert failing["uuid"] in deployed and kept["uuid"] not in deployed  # UUIDs kept
        after = prod.call("GET", f"/api/v1/database/{db_id}/connection")["result"]
        for key in ("uuid", "database_name", "sqlalchemy_uri"):
            assert after[key] == before[key]
        assert prod.call("GET", "/api/v1/database/")["count"] == 1
    finally:
        prod.close()
    data = ss_api.get(
        f"/api/dashboards/{dashboard_id}/charts/{failing['key']}/data",
        params={"environment": "production"},
        headers=ss_as["viewer"],
    )
    assert data.status_code == 200, data.text
    assert {r[0]: float(r[1]) for r in data.json()["rows"]} == dict(PRODUCTION_ROWS)
    health = ss_api.get(
        f"/api/dashboards/{dashboard_id}/health",
        params={"environment": "production"},
        headers=ss_as["viewer"],
    ).json()
    assert health["status"] == "ok", health
    assert {c["chart_title"] for c in health["latest_run"]["charts"]} == set(titles)
    shown = ss_api.get(
        f"/api/dashboards/{dashboard_id}", params={"ref": "repair"}, headers=ss_as["viewer"]
    ).json()
    urls = {c["title"]: c["explore_url"] for c in shown["version"]["definition"]["charts"]}
    assert urls["Orders by day"]["production"].startswith(superset_stack.production.url)
    assert "staging" not in urls["Orders by day"]  # added on the branch: not in staging yet
    with psycopg.connect(ss_database_url) as conn:
        row = conn.execute(
            "SELECT details FROM assistant_audit WHERE action = 'dashboard.commit'"
            " AND details->>'branch_id' = %s",
            (str(branch_id),),
        ).fetchone()
    assert row is not None and len(row[0]["changes"]) == 3


VIZ_EDITS = {
    "table": {"viz_type": "table", "row_limit": 2},
    "big_number_total": {"viz_type": "big_number_total", "metrics": ["count"]},
    "pie": {"viz_type": "pie", "filters": [{"column": "region", "op": "!=", "value": "east"}]},
    "echarts_timeseries_line": {"viz_type": "echarts_timeseries_line", "time_range": "Last year"},
    "echarts_timeseries_bar": {
        "viz_type": "echarts_timeseries_bar",
        "x_axis": "ordered_at",
        "metrics": [{"sql": "SUM(amount) / COUNT(*)", "label": "average"}],
    },
}


@pytest.mark.parametrize("viz", list(VIZ_EDITS))
def test_each_supported_viz_type_runs_on_staging_as_committed(ss_api, ss_as, synced, viz: str):
    dashboard_id = synced[BROKEN.title]
    chart = _broken(ss_api, ss_as["viewer"], dashboard_id)["Orders per region"]
    name = f"viz-{viz.replace('_', '-')}"
    branch_id = _branch(ss_api, ss_as["editor"], dashboard_id, name)
    update = {"op": "update", "key": chart["key"], "chart": VIZ_EDITS[viz]}
    commit = _commit(ss_api, ss_as["editor"], branch_id, [update])
    assert commit.status_code == 201, commit.text
    [saved] = [
        c for c in commit.json()["version"]["definition"]["charts"] if c["key"] == chart["key"]
    ]
    assert saved["viz_type"] == viz
    data = ss_api.get(
        f"/api/dashboards/{dashboard_id}/charts/{chart['key']}/data",
        params={"ref": name},
        headers=ss_as["viewer"],
    )
    assert data.status_code == 200, data.text
    body = data.json()
    assert body["rows"], body
    if viz == "table":
        assert len(body["rows"]) == 2
    if viz == "big_number_total":
        assert body["rows"] == [[len(STAGING_ROWS)]]
    if viz == "pie":
        assert sorted(r[0] for r in body["rows"]) == ["north", "south"]
    if viz.startswith("echarts_timeseries"):
        assert "ordered_at" in body["columns"]
