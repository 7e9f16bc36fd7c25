"""Where a synced dashboard lives in each environment's Superset (the `source` of its read)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.config import Settings
from backend.dashboards.models import ENVIRONMENTS
from backend.dashboards.schemas import SupersetLink, SupersetSource
from backend.errors import AppError
from backend.superset.charts import chart_ids
from backend.superset.client import client
from backend.superset.models import SupersetDashboard


def _link(settings: Settings, environment: str, superset_id: int | None) -> SupersetLink | None:
    instance = settings.superset.instance(environment)
    if instance is None or superset_id is None:
        return None
    url = f"{instance.url.rstrip('/')}/superset/dashboard/{superset_id}/"
    return SupersetLink(id=superset_id, url=url)


async def sources(
    *, session: AsyncSession, settings: Settings | None, dashboard_ids: Iterable[int]
) -> dict[int, SupersetSource]:
    """The Superset source of each dashboard that has one."""
    ids = list(dashboard_ids)
    if settings is None or not ids:
        return {}
    rows = await session.scalars(
        select(SupersetDashboard).where(SupersetDashboard.dashboard_id.in_(ids))
    )
    return {
        row.dashboard_id: SupersetSource(
            uuid=row.uuid,
            environments={
                "staging": _link(settings, "staging", row.staging_id),
                "production": _link(settings, "production", row.production_id),
            },
        )
        for row in rows
    }


async def explore_urls(
    *, settings: Settings, definition: dict[str, Any]
) -> dict[str, dict[str, str]]:
    """Chart key -> {environment: that chart in that Superset's Explore}, for each environment
    whose dashboard places it (an unreachable Superset gives no link, not an error)."""
    found: dict[str, dict[str, str]] = {}
    for environment in ENVIRONMENTS:
        instance = settings.superset.instance(environment)
        if instance is None:
            continue
        try:
            ids = await chart_ids(client(settings, environment), definition["superset"]["uuid"])
        except AppError:
            continue
        base = instance.url.rstrip("/")
        for chart in definition.get("charts", []):
            chart_id = ids.get(chart["uuid"])
            if chart_id is not None:
                url = f"{base}/explore/?slice_id={chart_id}"
                found.setdefault(chart["key"], {})[environment] = url
    return found
