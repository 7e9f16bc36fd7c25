"""Demo dashboards: initial versions, main, staging/production deployments, first validation."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.config import Settings
from backend.dashboards import deployments, service, validation
from backend.dashboards.definition import Definition
from backend.dashboards.demo import DASHBOARDS, DemoDashboard
from backend.dashboards.models import ENVIRONMENTS, Dashboard, DashboardVersion, ValidationRun
from backend.db import utcnow

SEED_ACTOR = "seed"
# How long ago the demo history happened: versions first, then staging, then production.
AGE = {
    "version": timedelta(days=30),
    "staging": timedelta(days=21),
    "production": timedelta(days=14),
}


async def _create(session: AsyncSession, spec: DemoDashboard) -> None:
    now = utcnow()
    dashboard = Dashboard(
        id=spec.id,
        title=spec.title,
        description=spec.description,
        tags=spec.tags,
        owner=spec.owner,
        created_at=now - AGE["version"],
        updated_at=now - AGE["version"],
    )
    session.add(dashboard)
    await session.flush()
    version = DashboardVersion(
        dashboard_id=spec.id,
        definition=Definition.model_validate({"charts": spec.charts}).model_dump(),
        author=spec.owner,
        message="Initial version",
        created_at=now - AGE["version"],
    )
    session.add(version)
    await session.flush()
    dashboard.main_version_id = version.id
    for environment in ENVIRONMENTS:
        await deployments.record(
            session=session,
            dashboard=dashboard,
            environment=environment,
            target=service.Target(version, service.MAIN),
            forced=False,
            deployed_by=spec.owner,
            validation_run_id=None,
            deployed_at=now - AGE[environment],
        )


async def _validate_new(session: AsyncSession, settings: Settings) -> None:
    """A first validation of every demo dashboard never validated, so status filters work."""
    validated = set(await session.scalars(select(ValidationRun.dashboard_id).distinct()))
    for spec in DASHBOARDS:
        if spec.id in validated:
            continue
        dashboard = await service.get(session=session, dashboard_id=spec.id)
        target = await service.resolve_ref(session=session, dashboard=dashboard, ref=service.MAIN)
        await validation.run(
            session=session,
            settings=settings,
            dashboard=dashboard,
            target=target,
            triggered_by=SEED_ACTOR,
        )
        await session.commit()


async def seed(*, session: AsyncSession, settings: Settings) -> None:
    """Idempotent: dashboards that exist are left as they are (with their history). With a
    Superset configured the dashboards are Superset's (its sync): no demo ones."""
    if settings.superset.enabled:
        return
    existing = set(await session.scalars(select(Dashboard.id)))
    for spec in DASHBOARDS:
        if spec.id not in existing:
            await _create(session, spec)
    await session.commit()
    await _validate_new(session, settings)
