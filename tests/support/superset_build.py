"""Build what the Superset tests look at, through Superset's own REST API: a `Warehouse`
database in each instance (same name, different data), datasets, charts and dashboards."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx
import psycopg

DATABASE_NAME = "Warehouse"
ORDERS = "CREATE TABLE orders (region text NOT NULL, amount numeric NOT NULL, ordered_at date)"


def fill_warehouse(url: str, rows: list[tuple[str, float]]) -> None:
    """The `orders` table a Superset database points at."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(ORDERS)
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO orders (region, amount, ordered_at) VALUES (%s, %s, '2026-11-01')",
                rows,
            )


class SupersetAdmin:
    """A logged-in admin client of one Superset instance (JSON, bearer and CSRF for writes)."""

    def __init__(self, url: str, username: str, password: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=60, headers={"Accept": "application/json"})
        login = self.http.post(
            "/api/v1/security/login",
            json={"username": username, "password": password, "provider": "db", "refresh": True},
        )
        login.raise_for_status()
        self.http.headers["Authorization"] = f"Bearer {login.json()['access_token']}"
        csrf = self.http.get("/api/v1/security/csrf_token/")
        csrf.raise_for_status()
        self.http.headers["X-CSRFToken"] = csrf.json()["result"]
        self.http.headers["Referer"] = url

    def close(self) -> None:
        self.http.close()

    def call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        response = self.http.request(method, path, **kwargs)
        if response.is_error:
            raise AssertionError(f"{method} {path}: {response.status_code} {response.text}")
        return dict(response.json())

    def database(self, name: str, sqlalchemy_uri: str) -> int:
        body = {"database_name": name, "sqlalchemy_uri": sqlalchemy_uri, "expose_in_sqllab": True}
        return int(self.call("POST", "/api/v1/database/", json=body)["id"])

    def dataset(self, database_id: int, table: str) -> int:
        body = {"database": database_id, "schema": "public", "table_name": table}
        return int(self.call("POST", "/api/v1/dataset/", json=body)["id"])

    def dashboard(self, title: str, slug: str) -> int:
        body = {"dashboard_title": title, "slug": slug, "published": True}
        return int(self.call("POST", "/api/v1/dashboard/", json=body)["id"])

    def chart(self, spec: ChartSpec, dataset_id: int, dashboard_id: int) -> int:
        form_data = {
            "datasource": f"{dataset_id}__table",
            "viz_type": spec.viz_type,
            "groupby": spec.groupby,
            "metrics": [spec.metric],
            "row_limit": 100,
        }
        query_context = {
            "datasource": {"id": dataset_id, "type": "table"},
            "force": False,
            "queries": [
                {
                    "columns": spec.groupby,
                    "metrics": [spec.metric],
                    "filters": [],
                    "orderby": [[spec.metric, False]] if spec.by_metric else [],
                    "row_limit": 100,
                }
            ],
            "form_data": form_data,
            "result_format": "json",
            "result_type": "full",
        }
        body = {
            "slice_name": spec.title,
            "viz_type": spec.viz_type,
            "datasource_id": dataset_id,
            "datasource_type": "table",
            "params": json.dumps(form_data),
            "query_context": json.dumps(query_context),
            "dashboards": [dashboard_id],
        }
        return int(self.call("POST", "/api/v1/chart/", json=body)["id"])

    def lay_out(self, dashboard_id: int, chart_ids: list[int]) -> None:
        """Place the charts in one row (Superset shows only positioned charts)."""
        position: dict[str, Any] = {
            "DASHBOARD_VERSION_KEY": "v2",
            "ROOT_ID": {"type": "ROOT", "id": "ROOT_ID", "children": ["GRID_ID"]},
            "GRID_ID": {"type": "GRID", "id": "GRID_ID", "children": ["ROW-1"], "parents": []},
            "ROW-1": {
                "type": "ROW",
                "id": "ROW-1",
                "children": [f"CHART-{c}" for c in chart_ids],
                "parents": ["ROOT_ID", "GRID_ID"],
                "meta": {"background": "BACKGROUND_TRANSPARENT"},
            },
        }
        for chart_id in chart_ids:
            position[f"CHART-{chart_id}"] = {
                "type": "CHART",
                "id": f"CHART-{chart_id}",
                "children": [],
                "parents": ["ROOT_ID", "GRID_ID", "ROW-1"],
                "meta": {"chartId": chart_id, "width": 4, "height": 50},
            }
        body = {
            "position_json": json.dumps(position),
            "json_metadata": json.dumps({"positions": position}),
        }
        self.call("PUT", f"/api/v1/dashboard/{dashboard_id}", json=body)


def _sum(column: str, label: str) -> dict[str, Any]:
    return {
        "expressionType": "SIMPLE",
        "column": {"column_name": column},
        "aggregate": "SUM",
        "label": label,
    }


@dataclass(frozen=True)
class ChartSpec:
    title: str
    viz_type: str
    metric: dict[str, Any]
    groupby: list[str] = field(default_factory=list)
    by_metric: bool = False  # rows ordered by the metric, largest first (not in time order)


@dataclass(frozen=True)
class DashboardSpec:
    title: str
    slug: str
    charts: list[ChartSpec]


GOOD = DashboardSpec(
    "Orders overview",
    "orders-overview",
    [
        ChartSpec("Revenue by region", "table", _sum("amount", "revenue"), ["region"]),
        ChartSpec("Total revenue", "big_number_total", _sum("amount", "revenue")),
    ],
)
# `discount` is no column of `orders`: Postgres refuses the query, Superset says so.
BROKEN = DashboardSpec(
    "Discount watch",
    "discount-watch",
    [
        ChartSpec("Orders per region", "table", _sum("amount", "orders"), ["region"]),
        ChartSpec("Discounts by region", "table", _sum("discount", "discounts"), ["region"]),
    ],
)
DASHBOARDS = (GOOD, BROKEN)
# A time series whose saved query orders its days by revenue: Superset answers `ordered_at` as
# epoch milliseconds (`coltypes` says temporal), not in time order. Built by the tests that need
# it (tests/superset/test_superset_walk.py), after the ones that count dashboards.
REVENUE_DAILY = DashboardSpec(
    "Revenue daily",
    "revenue-daily",
    [
        ChartSpec(
            "Revenue per day",
            "echarts_timeseries_line",
            _sum("amount", "revenue"),
            ["ordered_at"],
            by_metric=True,
        )
    ],
)
DAYS = [("north", 7.0, "2026-10-30"), ("south", 40.0, "2026-11-03"), ("east", 2.0, "2026-10-31")]


def add_days(url: str) -> None:
    """Orders on other days than the first rows' 1 November (a time series needs several)."""
    with psycopg.connect(url, autocommit=True) as conn, conn.cursor() as cur:
        cur.executemany("INSERT INTO orders (region, amount, ordered_at) VALUES (%s, %s, %s)", DAYS)


def build_dashboard(admin: SupersetAdmin, spec: DashboardSpec) -> int:
    """One more dashboard on the `orders` dataset of an instance built by build_staging."""
    q = "(filters:!((col:table_name,opr:eq,value:orders)))"
    datasets = admin.call("GET", "/api/v1/dataset/", params={"q": q})["result"]
    dashboard_id = admin.dashboard(spec.title, spec.slug)
    charts = [admin.chart(chart, int(datasets[0]["id"]), dashboard_id) for chart in spec.charts]
    admin.lay_out(dashboard_id, charts)
    return dashboard_id


def build_staging(admin: SupersetAdmin, warehouse_uri: str) -> dict[str, int]:
    """The staging instance: the database, the dataset, both dashboards; their ids by slug."""
    database_id = admin.database(DATABASE_NAME, warehouse_uri)
    dataset_id = admin.dataset(database_id, "orders")
    ids: dict[str, int] = {}
    for spec in DASHBOARDS:
        dashboard_id = admin.dashboard(spec.title, spec.slug)
        charts = [admin.chart(chart, dataset_id, dashboard_id) for chart in spec.charts]
        admin.lay_out(dashboard_id, charts)
        ids[spec.slug] = dashboard_id
    return ids


def build_production(admin: SupersetAdmin, warehouse_uri: str) -> int:
    """The production instance: only its own `Warehouse` database (a deploy brings the rest)."""
    return admin.database(DATABASE_NAME, warehouse_uri)
