"""Deployments: validated first, failing versions refused unless forced, RBAC, history, logs."""

from __future__ import annotations

import pytest
from psycopg.rows import dict_row

from tests.backend.dashboards.conftest import BROKEN_SQL, chart
from tests.backend.support import assert_error, audit_rows, scalar

BROKEN = [chart("ok_chart"), chart("broken", BROKEN_SQL, ["campaign_id", "conversions"])]


def deploy(api, headers, dashboard_id, **body):
    return api.post(f"/api/dashboards/{dashboard_id}/deployments", json=body, headers=headers)


def served(api, headers, dashboard_id, environment="production"):
    body = api.get(f"/api/dashboards/{dashboard_id}", headers=headers).json()
    return body["environments"][environment]


@pytest.mark.parametrize("role", ["viewer", "editor"])
def test_only_an_admin_deploys(api, as_user, as_agent, sql, role, make_dashboard):
    dashboard_id = make_dashboard()
    for headers in (as_user[role], as_agent[role]):
        response = deploy(api, headers, dashboard_id, ref="main", environment="staging")
        assert_error(response, 403, "FORBIDDEN")
    assert (
        scalar(
            sql, "SELECT count(*) FROM dashboard_deployments WHERE dashboard_id = %s", dashboard_id
        )
        == 2
    )  # the two the fixture made


def test_an_admin_deploys_a_healthy_version_after_validating_it(api, as_user, sql, make_dashboard):
    dashboard_id = make_dashboard(deploy=False)
    response = deploy(api, as_user["admin"], dashboard_id, ref="main", environment="staging")
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["environment"] == "staging" and body["ref"] == "main"
    assert body["forced"] is False and body["deployed_by"] == "admin"
    assert body["validation"]["status"] == "ok"
    assert body["validation_run_id"] == body["validation"]["id"]
    staging = served(api, as_user["viewer"], dashboard_id, "staging")
    assert staging["version_id"] == body["version_id"] and staging["status"] == "ok"
    assert served(api, as_user["viewer"], dashboard_id) is None
    with sql.cursor(row_factory=dict_row) as cur:
        logs = cur.execute(
            "SELECT level, message FROM operational_logs WHERE dashboard_id = %s "
            "AND source = 'dashboards.deployment'",
            (dashboard_id,),
        ).fetchall()
    assert [log["level"] for log in logs] == ["info"] and "staging" in logs[0]["message"]
    audits = audit_rows(sql, action="dashboard.deploy", resource_id=str(dashboard_id))
    assert [a["outcome"] for a in audits] == ["success"]
    assert audits[0]["details"]["deployment_id"] == body["id"]


def test_a_failing_version_is_refused_and_production_is_unchanged(
    api, as_user, sql, make_dashboard
):
    dashboard_id = make_dashboard([chart("ok_chart")])
    before = served(api, as_user["viewer"], dashboard_id)
    branch = api.post(
        f"/api/dashboards/{dashboard_id}/branches",
        json={"name": "breaks"},
        headers=as_user["editor"],
    ).json()
    api.post(
        f"/api/branches/{branch['id']}/commits",
        json={"message": "m", "changes": [{"op": "add", "chart": BROKEN[1]}]},
        headers=as_user["editor"],
    )
    response = deploy(api, as_user["admin"], dashboard_id, ref="breaks", environment="production")
    error = assert_error(response, 409, "VALIDATION_FAILED")
    assert [c["chart_key"] for c in error["details"]["failing_charts"]] == ["broken"]
    assert "campaign_id" in error["details"]["failing_charts"][0]["message"]
    assert served(api, as_user["viewer"], dashboard_id) == before
    count = "SELECT count(*) FROM dashboard_deployments WHERE dashboard_id = %s"
    assert scalar(sql, count, dashboard_id) == 2
    run_status = scalar(
        sql,
        "SELECT status FROM dashboard_validation_runs WHERE id = %s",
        error["details"]["validation_run_id"],
    )
    assert run_status == "failing"  # the evidence is kept
    audits = audit_rows(sql, action="dashboard.deploy", resource_id=str(dashboard_id))
    assert [a["outcome"] for a in audits] == ["refused"]
    warning = scalar(
        sql,
        "SELECT count(*) FROM operational_logs WHERE dashboard_id = %s AND level = 'warning' "
        "AND source = 'dashboards.deployment'",
        dashboard_id,
    )
    assert warning == 1


def test_a_forced_deploy_of_a_failing_version_is_recorded(api, as_user, sql, make_dashboard):
    dashboard_id = make_dashboard(BROKEN, deploy=False)
    response = deploy(
        api, as_user["admin"], dashboard_id, ref="main", environment="production", force=True
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["forced"] is True and body["validation"]["status"] == "failing"
    production = served(api, as_user["viewer"], dashboard_id)
    assert production["deployment_id"] == body["id"] and production["status"] == "failing"
    history = api.get(
        f"/api/dashboards/{dashboard_id}/deployments", headers=as_user["viewer"]
    ).json()
    assert history["total"] == 1 and history["items"][0]["forced"] is True
    forced = scalar(sql, "SELECT forced FROM dashboard_deployments WHERE id = %s", body["id"])
    assert forced is True
    level = scalar(
        sql,
        "SELECT level FROM operational_logs WHERE source = 'dashboards.deployment' "
        "AND details->>'deployment_id' = %s",
        str(body["id"]),
    )
    assert level == "warning"


def test_deployment_history_is_newest_first_and_filters_by_environment(
    api, as_user, make_dashboard
):
    dashboard_id = make_dashboard(deploy=False)
    for environment in ("staging", "production", "staging"):
        response = deploy(api, as_user["admin"], dashboard_id, ref="main", environment=environment)
        assert response.status_code == 201, response.text
    url = f"/api/dashboards/{dashboard_id}/deployments"
    history = api.get(url, headers=as_user["viewer"]).json()
    assert [d["environment"] for d in history["items"]] == ["staging", "production", "staging"]
    staging = api.get(url, params={"environment": "staging"}, headers=as_user["viewer"]).json()
    assert staging["total"] == 2


def test_a_version_id_ref_deploys_that_version(api, as_user, make_dashboard):
    dashboard_id = make_dashboard(deploy=False)
    version_id = api.get(f"/api/dashboards/{dashboard_id}", headers=as_user["viewer"]).json()[
        "main_version_id"
    ]
    response = deploy(
        api, as_user["admin"], dashboard_id, ref=str(version_id), environment="staging"
    )
    assert response.status_code == 201 and response.json()["version_id"] == version_id


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"ref": "no-such-branch", "environment": "staging"}, 404, "NOT_FOUND"),
        ({"ref": "999999", "environment": "staging"}, 404, "NOT_FOUND"),
        ({"ref": "main", "environment": "qa"}, 422, "INVALID_INPUT"),
        ({"ref": "", "environment": "staging"}, 422, "INVALID_INPUT"),
        ({"environment": "staging"}, 422, "INVALID_INPUT"),
        ({"ref": "main", "environment": "staging", "force": "yes please"}, 422, "INVALID_INPUT"),
    ],
)
def test_bad_deployment_requests_are_refused(api, as_user, make_dashboard, body, status, code):
    dashboard_id = make_dashboard()
    assert_error(deploy(api, as_user["admin"], dashboard_id, **body), status, code)


def test_another_dashboards_version_cannot_be_deployed(api, as_user, make_dashboard):
    other = api.get("/api/dashboards/42", headers=as_user["viewer"]).json()["main_version_id"]
    dashboard_id = make_dashboard()
    response = deploy(api, as_user["admin"], dashboard_id, ref=str(other), environment="staging")
    assert_error(response, 404, "NOT_FOUND")


def test_deploying_an_unknown_dashboard_is_not_found(api, as_user):
    response = deploy(api, as_user["admin"], 999999, ref="main", environment="staging")
    assert_error(response, 404, "NOT_FOUND")
