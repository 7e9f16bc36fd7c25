"""Sync: every dashboard of the staging Superset, with its charts, datasets and export bundle,
into the platform, keyed by UUID. A new or changed staging dashboard becomes a new version of
`main` (what staging serves) and is validated through staging's chart data API."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from backend.audit import service as audit
from backend.config import Settings
from backend.dashboards import deployments, service, validation
from backend.dashboards.models import Dashboard, DashboardVersion
from backend.errors import AppError
from backend.principal import Principal
from backend.superset import bundle, person
from backend.superset.client import SupersetClient, client
from backend.superset.models import SupersetDashboard

log = logging.getLogger("backend.superset")

LOCK_KEY = 330_033  # pg_advisory_xact_lock: one sync at a time across replicas
PAGE_SIZE = 100
SYNC_AUTHOR = "superset-sync"
MAX_TAGS = 20


class SyncRead(BaseModel):
    dashboards: int
    charts: int
    created: int
    changed: int


async def _listing(staging: SupersetClient) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    page = 0
    while True:
        q = f"(page:{page},page_size:{PAGE_SIZE})"
        body = await staging.json("GET", "/api/v1/dashboard/", params={"q": q})
        result = body.get("result") or []
        items.extend(result)
        if len(result) < PAGE_SIZE:
            # Oldest first (Superset lists the last changed first and cannot order by id): on a
            # new platform its ids and versions follow Superset's own order.
            return sorted(items, key=lambda item: int(item["id"]))
        page += 1


def _owner(item: dict[str, Any]) -> str:
    for owner in item.get("owners") or []:
        name = f"{owner.get('first_name') or ''} {owner.get('last_name') or ''}".strip()
        if name:
            return name[:64]
    return "superset"


def _describe(item: dict[str, Any], definition: dict[str, Any]) -> dict[str, Any]:
    """The dashboard row's searchable fields."""
    titles = ", ".join(c["title"] for c in definition["charts"])
    tags = ["superset"] + [
        str(t.get("name"))[:64]
        for t in item.get("tags") or []
        if isinstance(t, dict) and t.get("name") and ":" not in str(t.get("name"))
    ]
    return {
        "title": definition["superset"]["title"][:200] or str(item.get("uuid")),
        "description": f"Superset dashboard. Charts: {titles}" if titles else "Superset dashboard",
        "tags": tags[:MAX_TAGS],
        "owner": _owner(item),
    }


async def _next_id(session: AsyncSession) -> int:
    return int(await session.scalar(select(func.coalesce(func.max(Dashboard.id), 0))) or 0) + 1


async def _store(
    session: AsyncSession, item: dict[str, Any], files: dict[str, str]
) -> tuple[Dashboard, DashboardVersion | None]:
    """Create or update the platform dashboard; the new version when staging changed."""
    uuid = str(item["uuid"])
    fingerprint = bundle.fingerprint(files)
    link = await session.scalar(select(SupersetDashboard).where(SupersetDashboard.uuid == uuid))
    if link is not None and link.fingerprint == fingerprint:
        link.staging_id = int(item["id"])
        return await service.get(session=session, dashboard_id=link.dashboard_id), None
    definition = bundle.definition(files, bundle.chart_order(files))
    fields = _describe(item, definition)
    if link is None:
        dashboard = Dashboard(id=await _next_id(session), **fields)
        session.add(dashboard)
        await session.flush()
        link = SupersetDashboard(dashboard_id=dashboard.id, uuid=uuid, fingerprint="")
        session.add(link)
    else:
        dashboard = await service.get(session=session, dashboard_id=link.dashboard_id)
        for key, value in fields.items():
            setattr(dashboard, key, value)
    version = DashboardVersion(
        dashboard_id=dashboard.id,
        parent_version_id=dashboard.main_version_id,
        definition=definition,
        author=SYNC_AUTHOR,
        message="Synced from the staging Superset",
    )
    session.add(version)
    await session.flush()
    dashboard.main_version_id = version.id
    link.staging_id = int(item["id"])
    link.fingerprint = fingerprint
    await deployments.record(
        session=session,
        dashboard=dashboard,
        environment="staging",
        target=service.Target(version, service.MAIN),
        forced=False,
        deployed_by=SYNC_AUTHOR,
        validation_run_id=None,
    )
    return dashboard, version


async def sync(*, session: AsyncSession, settings: Settings, actor: Principal | None) -> SyncRead:
    """Read every staging dashboard (always as the service account); store new versions,
    validate them, audit the sync."""
    with person.as_service():
        return await _sync(session=session, settings=settings, actor=actor)


async def _sync(*, session: AsyncSession, settings: Settings, actor: Principal | None) -> SyncRead:
    staging = client(settings, "staging")
    await session.execute(select(func.pg_advisory_xact_lock(LOCK_KEY)))
    listing = await _listing(staging)
    charts = 0
    fresh: list[tuple[Dashboard, DashboardVersion]] = []
    created = 0
    for item in listing:
        data = await staging.content(
            "/api/v1/dashboard/export/", params={"q": f"!({int(item['id'])})"}
        )
        files = bundle.read_export(data)
        had = await session.scalar(
            select(SupersetDashboard.dashboard_id).where(
                SupersetDashboard.uuid == str(item["uuid"])
            )
        )
        dashboard, version = await _store(session, item, files)
        charts += sum(1 for path in files if path.startswith("charts/"))
        if version is not None:
            fresh.append((dashboard, version))
            created += had is None
    for dashboard, version in fresh:
        await validation.run(
            session=session,
            settings=settings,
            dashboard=dashboard,
            target=service.Target(version, service.MAIN),
            triggered_by=SYNC_AUTHOR,
        )
    result = SyncRead(
        dashboards=len(listing), charts=charts, created=created, changed=len(fresh) - created
    )
    audit.record(
        session=session,
        actor=actor,
        actor_username=None if actor else SYNC_AUTHOR,
        action="superset.sync",
        resource_type="superset",
        resource_id="staging",
        details=result.model_dump(),
    )
    await session.commit()
    return result


async def run_periodically(factory: async_sessionmaker[AsyncSession], settings: Settings) -> None:
    """Sync now and then every `superset.sync_interval_s`; a failed sync waits for the next."""
    while True:
        try:
            async with factory() as session:
                result = await sync(session=session, settings=settings, actor=None)
            log.info("superset sync: %s", result.model_dump())
        except AppError as exc:
            log.warning("superset sync failed: %s", exc.code)
        except Exception:  # a bug must not end the loop for the process's lifetime
            log.exception("superset sync failed")
        await asyncio.sleep(settings.superset.sync_interval_s)
