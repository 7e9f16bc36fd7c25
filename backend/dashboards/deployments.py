"""Deployments: validate a version, refuse a failing one unless forced, and record what an
environment serves from now on."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.codes import Code
from backend.config import Settings
from backend.dashboards import service, sources, validation
from backend.dashboards.models import Dashboard, Deployment, EnvironmentState
from backend.dashboards.schemas import (
    DeploymentCreate,
    DeploymentPage,
    DeploymentRead,
    DeploymentResult,
    RunRead,
)
from backend.db import utcnow
from backend.errors import Conflict
from backend.oplogs import service as oplogs
from backend.principal import Principal


async def record(
    *,
    session: AsyncSession,
    dashboard: Dashboard,
    environment: str,
    target: service.Target,
    forced: bool,
    deployed_by: str,
    validation_run_id: int | None,
    deployed_at: datetime | None = None,
) -> Deployment:
    """Add the deployment row and point the environment at its version (no commit)."""
    deployment = Deployment(
        deployed_at=deployed_at or utcnow(),
        dashboard_id=dashboard.id,
        environment=environment,
        version_id=target.version.id,
        ref=target.ref,
        forced=forced,
        deployed_by=deployed_by,
        validation_run_id=validation_run_id,
    )
    session.add(deployment)
    await session.flush()
    values = {"version_id": target.version.id, "deployment_id": deployment.id}
    await session.execute(
        insert(EnvironmentState)
        .values(dashboard_id=dashboard.id, environment=environment, **values)
        .on_conflict_do_update(index_elements=["dashboard_id", "environment"], set_=values)
    )
    return deployment


def _refuse(
    session: AsyncSession,
    actor: Principal,
    dashboard: Dashboard,
    data: DeploymentCreate,
    run: RunRead,
) -> Conflict:
    failing = [
        {"chart_key": c.chart_key, "title": c.chart_title, "message": c.message}
        for c in run.charts
        if c.status == "failing"
    ]
    oplogs.write(
        session=session,
        level="warning",
        source="dashboards.deployment",
        message=(
            f"Deployment of dashboard {dashboard.id} ({data.ref}, version {run.version_id}) "
            f"to {data.environment} refused: {len(failing)} chart(s) failing validation"
        ),
        dashboard_id=dashboard.id,
        details={"validation_run_id": run.id, "failing_charts": failing},
    )
    audit.record(
        session=session,
        actor=actor,
        action="dashboard.deploy",
        resource_type="dashboard",
        resource_id=str(dashboard.id),
        outcome="refused",
        details={"environment": data.environment, "ref": data.ref, "validation_run_id": run.id},
    )
    return Conflict(
        f"Version {run.version_id} fails validation; deploy refused (force=true overrides)",
        code=Code.VALIDATION_FAILED,
        details={
            "validation_run_id": run.id,
            "version_id": run.version_id,
            "failing_charts": failing,
        },
    )


async def deploy(
    *,
    session: AsyncSession,
    settings: Settings,
    actor: Principal,
    dashboard_id: int,
    data: DeploymentCreate,
) -> DeploymentResult:
    """Validate the version `data.ref` names, then deploy it to `data.environment`."""
    dashboard = await service.get(session=session, dashboard_id=dashboard_id)
    target = await service.resolve_ref(session=session, dashboard=dashboard, ref=data.ref)
    run = await validation.run(
        session=session,
        settings=settings,
        dashboard=dashboard,
        target=target,
        triggered_by=actor.username,
    )
    if run.status == "failing" and not data.force:
        refusal = _refuse(session, actor, dashboard, data, run)
        await session.commit()  # the run, its logs and the refusal are kept as evidence
        raise refusal
    # The source's own deploy happens before anything is recorded: a refusal records nothing.
    await sources.of(target.version.definition).deploy(
        session=session,
        settings=settings,
        dashboard=dashboard,
        version=target.version,
        environment=data.environment,
    )
    deployment = await record(
        session=session,
        dashboard=dashboard,
        environment=data.environment,
        target=target,
        forced=data.force,
        deployed_by=actor.username,
        validation_run_id=run.id,
    )
    forced_failing = run.status == "failing"
    oplogs.write(
        session=session,
        level="warning" if forced_failing else "info",
        source="dashboards.deployment",
        message=(
            f"Dashboard {dashboard.id} ({dashboard.title}) version {target.version.id} "
            f"({data.ref}) deployed to {data.environment} by {actor.username}"
            + (" despite failing validation (forced)" if forced_failing else "")
        ),
        dashboard_id=dashboard.id,
        details={"deployment_id": deployment.id, "validation_run_id": run.id, "forced": data.force},
    )
    audit.record(
        session=session,
        actor=actor,
        action="dashboard.deploy",
        resource_type="dashboard",
        resource_id=str(dashboard.id),
        details={
            "deployment_id": deployment.id,
            "environment": data.environment,
            "ref": data.ref,
            "version_id": target.version.id,
            "forced": data.force,
            "validation_status": run.status,
        },
    )
    await session.commit()
    read = DeploymentRead.model_validate(deployment)
    return DeploymentResult(**read.model_dump(), validation=run)


async def list_(
    *,
    session: AsyncSession,
    dashboard_id: int,
    environment: str | None,
    limit: int,
    offset: int,
) -> DeploymentPage:
    """Deployment history, newest first."""
    await service.get(session=session, dashboard_id=dashboard_id)
    query = select(Deployment).where(Deployment.dashboard_id == dashboard_id)
    if environment:
        query = query.where(Deployment.environment == environment)
    total = await session.scalar(select(func.count()).select_from(query.subquery()))
    rows = await session.scalars(
        query.order_by(Deployment.deployed_at.desc(), Deployment.id.desc())
        .limit(limit)
        .offset(offset)
    )
    return DeploymentPage(
        items=[DeploymentRead.model_validate(r) for r in rows], total=int(total or 0)
    )
