"""Chart data: one chart's SQL run through the read-only path, as the dashboard page draws it.

A chart that cannot be drawn answers with an error envelope: the query's own error (422
`SQL_ERROR` / `SQL_TIMEOUT` / `SQL_REJECTED`, 503 when the datasource is unreachable) with the
dashboard and chart named in `details`, or 422 `CHART_INVALID` when the definition itself is at
fault (a datasource that is not configured, expected columns the query does not return).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from backend.codes import Code
from backend.config import Settings
from backend.dashboards import service
from backend.dashboards.models import Dashboard, DashboardVersion
from backend.dashboards.schemas import ChartDataRead
from backend.datasources.readonly import QueryResult, execute_readonly
from backend.errors import AppError, NotFound, Unprocessable
from backend.superset import bundle as superset_bundle
from backend.superset import charts as superset_charts
from backend.superset import client as superset_client


class ChartInvalid(Unprocessable):
    """The chart's definition cannot produce what it promises."""

    code = Code.CHART_INVALID


async def _version(
    session: AsyncSession, dashboard: Dashboard, environment: str | None
) -> DashboardVersion:
    if environment is None:
        return await service.main_version(session=session, dashboard=dashboard)
    version = await service.environment_version(
        session=session, dashboard=dashboard, environment=environment
    )
    if version is None:
        raise NotFound(
            f"Nothing is deployed to {environment} for dashboard {dashboard.id}",
            details={"dashboard_id": dashboard.id, "environment": environment},
        )
    return version


def _chart(version: DashboardVersion, dashboard_id: int, chart_key: str) -> dict[str, Any]:
    for chart in version.definition.get("charts", []):
        if chart.get("key") == chart_key:
            return dict(chart)
    raise NotFound(
        f"Dashboard {dashboard_id} has no chart '{chart_key}'",
        details={"dashboard_id": dashboard_id, "chart_key": chart_key},
    )


async def _run(settings: Settings, chart: dict[str, Any], where: dict[str, Any]) -> QueryResult:
    datasource = str(chart.get("datasource", ""))
    try:
        return await execute_readonly(settings=settings, datasource=datasource, sql=chart["sql"])
    except NotFound as exc:  # the only NotFound here: the datasource is not configured
        raise ChartInvalid(
            f"Chart '{where['chart_key']}' reads datasource '{datasource}', "
            "which is not configured",
            details={**where, "datasource": datasource},
        ) from exc
    except AppError as exc:
        # The query's own envelope (code, status, message), saying which chart it was.
        exc.details = {**exc.details, **where}
        raise


def _check_columns(chart: dict[str, Any], result: QueryResult, where: dict[str, Any]) -> None:
    returned = {c.lower() for c in result.columns}
    missing = [c for c in chart.get("expected_columns", []) if c.lower() not in returned]
    if missing:
        raise ChartInvalid(
            f"Missing expected column(s): {', '.join(missing)}; "
            f"the query returned: {', '.join(result.columns) or 'no columns'}",
            details={**where, "missing": missing, "returned": result.columns},
        )


async def read(
    *,
    session: AsyncSession,
    settings: Settings,
    dashboard_id: int,
    chart_key: str,
    environment: str | None,
) -> ChartDataRead:
    """Run the chart of main (or of what `environment` serves) and return its rows."""
    dashboard = await service.get(session=session, dashboard_id=dashboard_id)
    version = await _version(session, dashboard, environment)
    chart = _chart(version, dashboard_id, chart_key)
    # Done with the platform database: give its connection back before a query that may
    # take seconds.
    await session.close()
    where = {"dashboard_id": dashboard_id, "chart_key": chart_key}
    if superset_bundle.is_superset(version.definition):
        return await _superset_rows(settings, version, chart, environment or "staging", where)
    result = await _run(settings, chart, where)
    _check_columns(chart, result, where)
    return ChartDataRead(
        chart_key=chart_key,
        title=str(chart.get("title", chart_key)),
        type=str(chart.get("type", "table")),
        version_id=version.id,
        columns=result.columns,
        rows=result.rows,
        row_count=result.row_count,
        truncated=result.truncated,
        elapsed_ms=result.elapsed_ms,
    )


async def _superset_rows(
    settings: Settings,
    version: DashboardVersion,
    chart: dict[str, Any],
    environment: str,
    where: dict[str, Any],
) -> ChartDataRead:
    """A Superset chart's rows from that environment's chart data API (its saved query)."""
    superset = superset_client.client(settings, environment)
    ids = await superset_charts.chart_ids(superset, version.definition["superset"]["uuid"])
    run = await superset_charts.run_chart(superset, ids.get(chart["uuid"]), chart["title"])
    if run.status == "failing":
        raise Unprocessable(
            run.message, code=run.code, details={**where, "environment": environment}
        )
    return ChartDataRead(
        chart_key=chart["key"],
        title=str(chart["title"]),
        type=str(chart.get("type", "table")),
        version_id=version.id,
        columns=list(run.columns),
        rows=[list(row) for row in run.rows],
        row_count=len(run.rows),
        truncated=(run.row_count or 0) > len(run.rows),
        elapsed_ms=run.elapsed_ms,
        temporal=list(run.temporal),
    )
