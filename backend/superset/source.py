"""Superset as a dashboard source: a version is the dashboard's export bundle, its charts
run by an environment's Superset (each chart's saved query, through its chart data API), a
deploy imports the version there (the safe promotion of `deploy.py`).

Installed beside the built-in source at app construction (`backend/main.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import ColumnElement
from sqlalchemy.ext.asyncio import AsyncSession

from backend.config import Settings
from backend.dashboards.definition import Change
from backend.dashboards.models import ENVIRONMENTS, Dashboard, DashboardVersion
from backend.dashboards.schemas import ChartDataRead, SupersetSource
from backend.dashboards.source import Chart, Outcome, Target
from backend.errors import Unprocessable
from backend.superset import bundle, deploy, links, visibility
from backend.superset import charts as chart_api
from backend.superset.client import client

STAGING = "staging"  # where a branch's charts run: they are staging's until deployed


class Superset:
    """Dashboards synced from the staging Superset (`sync.py`)."""

    live = True  # its data and charts change in Superset: health runs them anew

    def claims(self, definition: dict[str, Any]) -> bool:
        return bundle.is_superset(definition)

    async def commit(
        self, *, settings: Settings, definition: dict[str, Any], changes: list[Change]
    ) -> dict[str, Any]:
        return bundle.apply_changes(definition, changes)

    async def run_charts(
        self, *, settings: Settings, target: Target, charts: list[Chart]
    ) -> list[Outcome]:
        runs = await chart_api.run_charts(
            settings=settings,
            environment=target.ref if target.ref in ENVIRONMENTS else STAGING,
            dashboard_uuid=target.version.definition["superset"]["uuid"],
            charts=charts,
        )
        return [Outcome(r.status, r.message, r.elapsed_ms, r.row_count, r.code) for r in runs]

    async def chart_data(
        self,
        *,
        settings: Settings,
        version: DashboardVersion,
        chart: Chart,
        environment: str | None,
        where: dict[str, Any],
    ) -> ChartDataRead:
        """A chart's rows from that environment's chart data API (its saved query)."""
        environment = environment or STAGING
        superset = client(settings, environment)
        ids = await chart_api.chart_ids(superset, version.definition["superset"]["uuid"])
        run = await chart_api.run_chart(superset, ids.get(chart["uuid"]), chart["title"])
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

    async def deploy(
        self,
        *,
        session: AsyncSession,
        settings: Settings,
        dashboard: Dashboard,
        version: DashboardVersion,
        environment: str,
    ) -> None:
        await deploy.push(
            session=session,
            settings=settings,
            dashboard=dashboard,
            version=version,
            environment=environment,
        )

    async def links(
        self, *, session: AsyncSession, settings: Settings | None, dashboard_ids: Iterable[int]
    ) -> dict[int, SupersetSource]:
        return await links.sources(session=session, settings=settings, dashboard_ids=dashboard_ids)

    async def hidden(self) -> ColumnElement[bool] | None:
        return await visibility.hidden_clause()

    async def check_visible(self, session: AsyncSession, dashboard_id: int) -> None:
        await visibility.check(session, dashboard_id)


SUPERSET = Superset()
