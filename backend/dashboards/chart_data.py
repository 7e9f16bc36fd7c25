"""Chart data: one chart run by its dashboard's source, as the dashboard page draws it.

A chart that cannot be drawn answers with an error envelope: the query's own error (422
`SQL_ERROR` / `SQL_TIMEOUT` / `SQL_REJECTED`, 503 when the datasource is unreachable) with the
dashboard and chart named in `details`, or 422 `CHART_INVALID` when the definition itself is at
fault (a datasource that is not configured, expected columns the query does not return).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from backend.config import Settings
from backend.dashboards import service, sources
from backend.dashboards.models import Dashboard, DashboardVersion
from backend.dashboards.schemas import ChartDataRead
from backend.errors import NotFound


async def _version(
    session: AsyncSession, dashboard: Dashboard, environment: str | None, ref: str | None
) -> DashboardVersion:
    if ref is not None and environment is None:
        return (await service.resolve_ref(session=session, dashboard=dashboard, ref=ref)).version
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


async def read(
    *,
    session: AsyncSession,
    settings: Settings,
    dashboard_id: int,
    chart_key: str,
    environment: str | None,
    ref: str | None = None,
) -> ChartDataRead:
    """Run the chart of main (or of what `environment` serves, or of the version `ref`
    names) and return its rows."""
    dashboard = await service.get(session=session, dashboard_id=dashboard_id)
    version = await _version(session, dashboard, environment, ref)
    chart = _chart(version, dashboard_id, chart_key)
    # Done with the platform database: give its connection back before a query that may
    # take seconds.
    await session.close()
    return await sources.of(version.definition).chart_data(
        settings=settings,
        version=version,
        chart=chart,
        environment=environment,
        where={"dashboard_id": dashboard_id, "chart_key": chart_key},
    )
