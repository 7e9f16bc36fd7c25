"""Superset as a dashboard source: a version is the dashboard's export bundle, its charts
run by an environment's Superset (each chart's saved query, through its chart data API), a
deploy imports the version there (the safe promotion of `deploy.py`).

Installed beside the built-in source at app construction (`backend/main.py`).
"""

from __future__ import annotations

import json
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
from backend.superset import bundle, checks, deploy, edits, links, visibility
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
        """The changes on a copy of the bundle; each chart added or changed checked and run on
        staging first (422 VALIDATION_FAILED, nothing stored, when one cannot run)."""
        staging = client(settings, STAGING)
        edit = await edits.apply(definition["superset"]["files"], changes, staging)
        await checks.check(staging, list(edit.touched.values()), edit.refused)
        return bundle.definition(edit.files, bundle.chart_order(edit.files))

    async def run_charts(
        self, *, settings: Settings, target: Target, charts: list[Chart]
    ) -> list[Outcome]:
        # An environment's charts run as saved there; any other version's (main, a branch,
        # a version id) run on staging with that version's own queries.
        environment = target.ref if target.ref in ENVIRONMENTS else None
        runs = await chart_api.run_charts(
            settings=settings,
            environment=environment or STAGING,
            dashboard_uuid=target.version.definition["superset"]["uuid"],
            charts=charts,
            contexts=None if environment else _contexts(target.version.definition),
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
        runs = await chart_api.run_charts(
            settings=settings,
            environment=environment or STAGING,
            dashboard_uuid=version.definition["superset"]["uuid"],
            charts=[chart],
            contexts=None if environment else _contexts(version.definition),
        )
        run = runs[0]
        environment = environment or STAGING
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

    async def chart_links(
        self, *, settings: Settings, version: DashboardVersion
    ) -> dict[str, dict[str, str]]:
        """Each chart's Explore URL in each environment it is deployed to (by chart key)."""
        return await links.explore_urls(settings=settings, definition=version.definition)

    async def links(
        self, *, session: AsyncSession, settings: Settings | None, dashboard_ids: Iterable[int]
    ) -> dict[int, SupersetSource]:
        return await links.sources(session=session, settings=settings, dashboard_ids=dashboard_ids)

    async def hidden(self) -> ColumnElement[bool] | None:
        return await visibility.hidden_clause()

    async def check_visible(self, session: AsyncSession, dashboard_id: int) -> None:
        await visibility.check(session, dashboard_id)


def _contexts(definition: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Chart UUID -> the query context this version saves for it."""
    found: dict[str, dict[str, Any]] = {}
    for path, text in definition["superset"]["files"].items():
        if path.startswith("charts/"):
            cfg = bundle.load(text)
            if cfg.get("query_context"):
                found[str(cfg["uuid"])] = json.loads(cfg["query_context"])
    return found


SUPERSET = Superset()
