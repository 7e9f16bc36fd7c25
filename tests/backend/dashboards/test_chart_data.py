"""Chart data over real HTTP: a chart's SQL really runs read-only with the /query caps, and a
chart that cannot be drawn answers with its error envelope."""

from __future__ import annotations

from psycopg.types.json import Jsonb

from tests.backend.dashboards.conftest import BROKEN_SQL, chart
from tests.backend.support import assert_error

MANY_ROWS = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500) "
    "SELECT i AS n, i * 2 AS doubled FROM n"
)


def data(api, headers, dashboard_id, chart_key, **params):
    url = f"/api/dashboards/{dashboard_id}/charts/{chart_key}/data"
    return api.get(url, params=params, headers=headers)


def test_a_viewer_gets_the_rows_of_the_revenue_by_month_chart(api, as_user):
    response = data(api, as_user["viewer"], 42, "revenue_by_month")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["columns"] == ["month", "revenue"]
    assert body["type"] == "line" and body["title"] == "Revenue by month"
    assert body["truncated"] is False and body["row_count"] == len(body["rows"]) > 1
    months = [row[0] for row in body["rows"]]
    assert months == sorted(months) and all(len(m) == 7 and m[4] == "-" for m in months)
    assert all(isinstance(row[1], int | float) and row[1] > 0 for row in body["rows"])


def test_chart_rows_are_exactly_what_the_query_endpoint_returns_for_its_sql(api, as_user):
    dashboard = api.get("/api/dashboards/42", headers=as_user["viewer"]).json()
    sql = next(
        c["sql"] for c in dashboard["main"]["definition"]["charts"] if c["key"] == "top_products"
    )
    queried = api.post(
        "/api/datasources/sample/query", json={"sql": sql}, headers=as_user["viewer"]
    ).json()
    body = data(api, as_user["viewer"], 42, "top_products").json()
    assert (body["columns"], body["rows"], body["truncated"]) == (
        queried["columns"],
        queried["rows"],
        queried["truncated"],
    )
    assert body["version_id"] == dashboard["main_version_id"]


def test_a_chart_is_cut_at_the_same_row_cap_as_the_query_endpoint(api, as_user, make_dashboard):
    dashboard_id = make_dashboard([chart("many", MANY_ROWS, ["n", "doubled"])])
    body = data(api, as_user["viewer"], dashboard_id, "many").json()
    queried = api.post(
        "/api/datasources/sample/query", json={"sql": MANY_ROWS}, headers=as_user["viewer"]
    ).json()
    assert body["truncated"] is True and queried["truncated"] is True
    assert len(body["rows"]) == len(queried["rows"]) == 1000
    assert body["rows"][-1] == [1000, 2000]


def test_the_failing_chart_of_dashboard_17_answers_with_the_database_error(api, as_user):
    response = data(api, as_user["viewer"], 17, "conversions_by_campaign")
    error = assert_error(response, 422, "SQL_ERROR")
    assert "campaign_id" in error["message"]
    assert error["details"]["dashboard_id"] == 17
    assert error["details"]["chart_key"] == "conversions_by_campaign"
    healthy = data(api, as_user["viewer"], 17, "events_by_type")
    assert healthy.status_code == 200 and healthy.json()["rows"]


def test_a_chart_missing_its_expected_columns_is_chart_invalid(api, as_user, make_dashboard):
    dashboard_id = make_dashboard([chart("c", expected=["status", "orders", "region"])])
    error = assert_error(data(api, as_user["viewer"], dashboard_id, "c"), 422, "CHART_INVALID")
    assert error["details"]["missing"] == ["region"]
    assert error["details"]["returned"] == ["status", "orders"]


def test_a_chart_on_an_unconfigured_datasource_is_chart_invalid_not_a_404(
    api, as_user, make_dashboard
):
    dashboard_id = make_dashboard([chart("ghost", datasource="nowhere")])
    error = assert_error(data(api, as_user["viewer"], dashboard_id, "ghost"), 422, "CHART_INVALID")
    assert error["details"]["datasource"] == "nowhere"


def test_a_chart_whose_sql_writes_is_refused_and_changes_nothing(api, as_user, make_dashboard):
    dashboard_id = make_dashboard([chart("bad", "DELETE FROM orders", [])])
    before = api.post(
        "/api/datasources/sample/query",
        json={"sql": "SELECT COUNT(*) FROM orders"},
        headers=as_user["viewer"],
    ).json()["rows"]
    error = assert_error(data(api, as_user["viewer"], dashboard_id, "bad"), 422, "SQL_REJECTED")
    assert error["details"]["chart_key"] == "bad"
    after = api.post(
        "/api/datasources/sample/query",
        json={"sql": "SELECT COUNT(*) FROM orders"},
        headers=as_user["viewer"],
    ).json()["rows"]
    assert after == before


def test_unknown_dashboards_and_charts_are_404_envelopes(api, as_user):
    error = assert_error(
        data(api, as_user["viewer"], 999_999, "revenue_by_month"), 404, "NOT_FOUND"
    )
    assert error["details"] == {"dashboard_id": 999_999}
    error = assert_error(data(api, as_user["viewer"], 42, "no_such_chart"), 404, "NOT_FOUND")
    assert error["details"]["chart_key"] == "no_such_chart"
    assert_error(data(api, as_user["viewer"], 42, "x" * 65), 422, "INVALID_INPUT")


def test_an_environment_runs_the_version_it_serves(api, as_user, make_dashboard, sql):
    dashboard_id = make_dashboard([chart("by_status")])
    # main moves on to a broken chart; production still serves the working version.
    version_id = sql.execute(
        "INSERT INTO dashboard_versions (dashboard_id, definition, author, message, created_at) "
        "VALUES (%s, %s, 'tests', 'break it', now()) RETURNING id",
        (dashboard_id, Jsonb({"charts": [chart("by_status", BROKEN_SQL, [])]})),
    ).fetchone()[0]
    sql.execute(
        "UPDATE dashboards SET main_version_id = %s WHERE id = %s", (version_id, dashboard_id)
    )

    assert_error(data(api, as_user["viewer"], dashboard_id, "by_status"), 422, "SQL_ERROR")
    served = data(api, as_user["viewer"], dashboard_id, "by_status", environment="production")
    assert served.status_code == 200 and served.json()["version_id"] != version_id
    assert served.json()["columns"] == ["status", "orders"]


def test_an_environment_with_nothing_deployed_is_404(api, as_user, make_dashboard):
    dashboard_id = make_dashboard(deploy=False)
    response = data(api, as_user["viewer"], dashboard_id, "by_status", environment="staging")
    assert_error(response, 404, "NOT_FOUND")
    bad = data(api, as_user["viewer"], dashboard_id, "by_status", environment="moon")
    assert_error(bad, 422, "INVALID_INPUT")


def test_chart_data_needs_a_signed_in_user(api):
    assert_error(data(api, {}, 42, "revenue_by_month"), 401, "UNAUTHORIZED")
    forged = {"Authorization": "Bearer not-a-token"}
    assert_error(data(api, forged, 42, "revenue_by_month"), 401, "UNAUTHORIZED")
