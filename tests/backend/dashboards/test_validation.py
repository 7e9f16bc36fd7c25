"""Validation really runs each chart's SQL and stores what it found."""

from __future__ import annotations

from psycopg.rows import dict_row

from tests.backend.dashboards.conftest import BROKEN_SQL, chart
from tests.backend.support import assert_error, audit_rows, scalar


def validate(api, headers, dashboard_id, **body):
    response = api.post(f"/api/dashboards/{dashboard_id}/validate", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def by_key(run):
    return {c["chart_key"]: c for c in run["charts"]}


def test_validating_the_marketing_funnel_names_the_missing_column(api, as_user):
    run = validate(api, as_user["viewer"], 17)
    assert run["status"] == "failing" and run["triggered_by"] == "viewer"
    broken = by_key(run)["conversions_by_campaign"]
    assert broken["status"] == "failing"
    assert "campaign_id" in broken["message"] and "no such column" in broken["message"]
    assert by_key(run)["events_by_type"]["status"] == "ok"


def test_a_chart_on_a_missing_table_fails_naming_the_table(api, as_user, make_dashboard):
    dashboard_id = make_dashboard([chart("stock", "SELECT * FROM warehouse_stock", ["sku"])])
    run = validate(api, as_user["viewer"], dashboard_id)
    assert run["status"] == "failing"
    assert "no such table: warehouse_stock" in run["charts"][0]["message"]


def test_missing_expected_columns_fail_and_are_named(api, as_user, make_dashboard):
    dashboard_id = make_dashboard([chart("c", expected=["status", "orders", "region"])])
    result = validate(api, as_user["viewer"], dashboard_id)["charts"][0]
    assert result["status"] == "failing"
    assert "region" in result["message"] and result["row_count"] > 0


def test_charts_on_a_postgres_datasource_validate_too(api, as_user, make_dashboard):
    pg = chart("pg", "SELECT 1 AS one, now() AS at", ["one", "at"], datasource="warehouse")
    run = validate(api, as_user["viewer"], make_dashboard([pg]))
    assert run["status"] == "ok" and run["charts"][0]["row_count"] == 1


def test_a_chart_returning_no_rows_is_a_warning(api, as_user):
    run = validate(api, as_user["viewer"], 29)
    assert run["status"] == "warning"
    chargebacks = by_key(run)["chargebacks"]
    assert chargebacks["status"] == "warning" and chargebacks["row_count"] == 0
    assert by_key(run)["cancelled_by_month"]["status"] == "ok"


def test_a_refused_statement_fails_validation_with_the_reason(api, as_user, make_dashboard):
    dashboard_id = make_dashboard([chart("bad", "DELETE FROM orders", [])])
    result = validate(api, as_user["viewer"], dashboard_id)["charts"][0]
    assert result["status"] == "failing" and result["message"].startswith("SQL_REJECTED")


def test_each_chart_result_is_stored_with_the_run(api, as_user, sql):
    run = validate(api, as_user["viewer"], 17)
    with sql.cursor(row_factory=dict_row) as cur:
        stored = cur.execute(
            "SELECT r.status AS run_status, r.version_id, r.triggered_by, c.chart_key, c.status, "
            "c.message, c.row_count FROM dashboard_validation_runs r "
            "JOIN dashboard_chart_results c ON c.run_id = r.id WHERE r.id = %s ORDER BY c.id",
            (run["id"],),
        ).fetchall()
    assert [r["chart_key"] for r in stored] == [c["chart_key"] for c in run["charts"]]
    assert {r["run_status"] for r in stored} == {"failing"}
    failing = [r for r in stored if r["status"] == "failing"]
    assert [r["chart_key"] for r in failing] == ["conversions_by_campaign"]
    assert "campaign_id" in failing[0]["message"] and failing[0]["row_count"] is None


def test_failures_are_written_to_the_operational_log(api, as_user, sql):
    run = validate(api, as_user["viewer"], 17)
    with sql.cursor(row_factory=dict_row) as cur:
        logs = cur.execute(
            "SELECT level, source, message, details FROM operational_logs "
            "WHERE dashboard_id = 17 AND details->>'validation_run_id' = %s",
            (str(run["id"]),),
        ).fetchall()
    assert len(logs) == 1
    assert logs[0]["level"] == "error" and logs[0]["source"] == "dashboards.validation"
    assert "campaign_id" in logs[0]["message"]
    assert logs[0]["details"]["chart_key"] == "conversions_by_campaign"


def test_a_healthy_validation_writes_no_error_log(api, as_user, sql):
    run = validate(api, as_user["viewer"], 42)
    assert run["status"] == "ok"
    count = scalar(
        sql,
        "SELECT count(*) FROM operational_logs WHERE details->>'validation_run_id' = %s",
        str(run["id"]),
    )
    assert count == 0


def test_a_validation_is_audited_for_the_viewer_who_ran_it(api, as_user, sql):
    run = validate(api, as_user["viewer"], 42)
    rows = [
        r
        for r in audit_rows(sql, action="dashboard.validate", resource_id="42")
        if r["details"]["run_id"] == run["id"]
    ]
    assert len(rows) == 1 and rows[0]["actor_username"] == "viewer"


def test_health_returns_the_latest_run_with_charts_and_recent_history(api, as_user):
    first = validate(api, as_user["viewer"], 17)
    second = validate(api, as_user["viewer"], 17)
    health = api.get("/api/dashboards/17/health", headers=as_user["viewer"]).json()
    assert health["target"] == "main" and health["status"] == "failing"
    assert health["latest_run"]["id"] == second["id"]
    assert by_key(health["latest_run"])["conversions_by_campaign"]["status"] == "failing"
    history = [r["id"] for r in health["history"]]
    assert history[:2] == [second["id"], first["id"]] and len(history) <= 10


def test_health_for_an_environment_follows_the_version_it_serves(api, as_user, make_dashboard):
    dashboard_id = make_dashboard([chart("broken", BROKEN_SQL, ["campaign_id"])])
    url = f"/api/dashboards/{dashboard_id}/health"
    assert api.get(url, headers=as_user["viewer"]).json()["status"] == "unknown"
    validate(api, as_user["viewer"], dashboard_id, environment="production")
    production = api.get(url, params={"environment": "production"}, headers=as_user["viewer"])
    assert production.json()["status"] == "failing"
    assert production.json()["target"] == "production"


def test_validating_a_version_by_id_or_an_unknown_ref(api, as_user):
    main_version = api.get("/api/dashboards/42", headers=as_user["viewer"]).json()[
        "main_version_id"
    ]
    run = validate(api, as_user["viewer"], 42, ref=str(main_version))
    assert run["version_id"] == main_version and run["ref"] == str(main_version)
    for ref in ("no-such-branch", "999999", "99999999999"):
        response = api.post(
            "/api/dashboards/42/validate", json={"ref": ref}, headers=as_user["viewer"]
        )
        assert_error(response, 404, "NOT_FOUND")


def test_validate_refuses_a_ref_and_an_environment_together(api, as_user):
    response = api.post(
        "/api/dashboards/42/validate",
        json={"ref": "main", "environment": "production"},
        headers=as_user["viewer"],
    )
    assert_error(response, 422, "INVALID_INPUT")
    response = api.post(
        "/api/dashboards/42/validate", json={"rev": "main"}, headers=as_user["viewer"]
    )
    assert_error(response, 422, "INVALID_INPUT")


def test_validating_an_unknown_dashboard_is_not_found(api, as_user):
    response = api.post("/api/dashboards/999999/validate", headers=as_user["viewer"])
    assert_error(response, 404, "NOT_FOUND")
