"""Reading dashboards: lookups, ref resolution, environment states and status summaries."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.config import Settings
from backend.dashboards import sources
from backend.dashboards.models import (
    Branch,
    Dashboard,
    DashboardVersion,
    Deployment,
    EnvironmentState,
    ValidationRun,
)
from backend.dashboards.schemas import (
    BranchSummary,
    DashboardRead,
    DashboardSummary,
    EnvironmentRead,
    Environments,
    RunSummary,
    SupersetSource,
    VersionRead,
)
from backend.dashboards.source import Target
from backend.errors import NotFound

MAIN = "main"
MAX_ID = 2_147_483_647


async def get(*, session: AsyncSession, dashboard_id: int) -> Dashboard:
    dashboard = await session.get(Dashboard, dashboard_id)
    if dashboard is None:
        raise NotFound(
            f"Dashboard {dashboard_id} not found", details={"dashboard_id": dashboard_id}
        )
    await sources.check_visible(session, dashboard_id)  # person mode: what their Superset hides
    return dashboard


async def get_version(
    *, session: AsyncSession, dashboard_id: int, version_id: int
) -> DashboardVersion:
    version = await session.get(DashboardVersion, version_id)
    if version is None or version.dashboard_id != dashboard_id:
        raise NotFound(
            f"Version {version_id} of dashboard {dashboard_id} not found",
            details={"dashboard_id": dashboard_id, "version_id": version_id},
        )
    await sources.check_visible(session, dashboard_id)
    return version


async def main_version(*, session: AsyncSession, dashboard: Dashboard) -> DashboardVersion:
    if dashboard.main_version_id is None:
        raise NotFound(f"Dashboard {dashboard.id} has no main version")
    return await get_version(
        session=session, dashboard_id=dashboard.id, version_id=dashboard.main_version_id
    )


async def resolve_ref(*, session: AsyncSession, dashboard: Dashboard, ref: str) -> Target:
    """`main`, a branch name of this dashboard, or a version id of this dashboard."""
    if ref == MAIN:
        return Target(await main_version(session=session, dashboard=dashboard), MAIN)
    if ref.isascii() and ref.isdigit():
        if int(ref) > MAX_ID:
            raise NotFound(f"Version {ref} not found", details={"ref": ref})
        version = await get_version(session=session, dashboard_id=dashboard.id, version_id=int(ref))
        return Target(version, ref)
    branch = await session.scalar(
        select(Branch).where(Branch.dashboard_id == dashboard.id, Branch.name == ref)
    )
    if branch is None:
        raise NotFound(
            f"Dashboard {dashboard.id} has no branch or version named {ref!r}",
            details={"dashboard_id": dashboard.id, "ref": ref},
        )
    version = await get_version(
        session=session, dashboard_id=dashboard.id, version_id=branch.head_version_id
    )
    return Target(version, ref)


async def environment_version(
    *, session: AsyncSession, dashboard: Dashboard, environment: str
) -> DashboardVersion | None:
    state = await session.get(EnvironmentState, (dashboard.id, environment))
    if state is None:
        return None
    return await session.get(DashboardVersion, state.version_id)


async def latest_runs(
    *, session: AsyncSession, version_ids: Iterable[int | None]
) -> dict[int, ValidationRun]:
    """The newest validation run of each version (versions are immutable, runs are not)."""
    ids = {v for v in version_ids if v is not None}
    if not ids:
        return {}
    rows = await session.scalars(
        select(ValidationRun)
        .where(ValidationRun.version_id.in_(ids))
        .order_by(
            ValidationRun.version_id,
            ValidationRun.started_at.desc(),
            ValidationRun.id.desc(),
        )
        .distinct(ValidationRun.version_id)
    )
    return {run.version_id: run for run in rows}


async def environments(
    *, session: AsyncSession, dashboards: list[Dashboard]
) -> dict[int, Environments]:
    """What staging and production serve for each dashboard, with each version's status."""
    ids = [d.id for d in dashboards]
    rows = (
        await session.execute(
            select(EnvironmentState, Deployment)
            .join(Deployment, Deployment.id == EnvironmentState.deployment_id)
            .where(EnvironmentState.dashboard_id.in_(ids))
        )
    ).all()
    runs = await latest_runs(session=session, version_ids=[s.version_id for s, _ in rows])
    mains = {d.id: d.main_version_id for d in dashboards}
    result = {i: Environments() for i in ids}
    for state, deployment in rows:
        run = runs.get(state.version_id)
        read = EnvironmentRead(
            environment=state.environment,
            version_id=state.version_id,
            deployment_id=deployment.id,
            deployed_at=deployment.deployed_at,
            deployed_by=deployment.deployed_by,
            status=run.status if run else "unknown",
            last_validated_at=run.started_at if run else None,
            is_main=state.version_id == mains[state.dashboard_id],
        )
        setattr(result[state.dashboard_id], state.environment, read)
    return result


def summary(
    dashboard: Dashboard,
    run: ValidationRun | None,
    envs: Environments,
    source: SupersetSource | None = None,
) -> DashboardSummary:
    return DashboardSummary(
        id=dashboard.id,
        title=dashboard.title,
        description=dashboard.description,
        tags=list(dashboard.tags),
        owner=dashboard.owner,
        main_version_id=dashboard.main_version_id,
        status=run.status if run else "unknown",
        last_validated_at=run.started_at if run else None,
        environments=envs,
        source=source,
    )


async def _shown(settings: Settings | None, version: DashboardVersion) -> VersionRead:
    """The version as an answer shows it: each chart with its `explore_url` where it has one."""
    read = VersionRead.model_validate(version)
    if settings is None:
        return read
    urls = await sources.of(version.definition).chart_links(settings=settings, version=version)
    if not urls:
        return read
    charts = [
        {**c, "explore_url": urls.get(c.get("key"), {})} for c in version.definition["charts"]
    ]
    return read.model_copy(update={"definition": {**version.definition, "charts": charts}})


async def read(
    *,
    session: AsyncSession,
    dashboard_id: int,
    settings: Settings | None = None,
    ref: str | None = None,
) -> DashboardRead:
    """The dashboard with main's definition, branches, environments and latest validation;
    with `ref`, also the version it names."""
    dashboard = await get(session=session, dashboard_id=dashboard_id)
    shown = await resolve_ref(session=session, dashboard=dashboard, ref=ref) if ref else None
    main = await session.get(DashboardVersion, dashboard.main_version_id or 0)
    runs = await latest_runs(session=session, version_ids=[dashboard.main_version_id])
    run = runs.get(dashboard.main_version_id or 0)
    envs = (await environments(session=session, dashboards=[dashboard]))[dashboard.id]
    branches = await session.scalars(
        select(Branch).where(Branch.dashboard_id == dashboard.id).order_by(Branch.id)
    )
    links = await sources.links(session=session, settings=settings, dashboard_ids=[dashboard.id])
    base = summary(dashboard, run, envs, links.get(dashboard.id))
    return DashboardRead(
        **base.model_dump(),
        created_at=dashboard.created_at,
        updated_at=dashboard.updated_at,
        main=await _shown(settings, main) if main else None,
        branches=[BranchSummary.model_validate(b) for b in branches],
        latest_validation=RunSummary.model_validate(run) if run else None,
        ref=ref,
        version=await _shown(settings, shown.version) if shown else None,
    )
