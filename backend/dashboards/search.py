"""Full-text search over dashboards with a status filter from the latest validation."""

from __future__ import annotations

from sqlalchemy import ColumnElement, Select, func, literal, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped

from backend.config import Settings
from backend.dashboards import service, sources
from backend.dashboards.models import Dashboard, EnvironmentState, ValidationRun
from backend.dashboards.schemas import DashboardPage, EnvironmentRead, Environments
from backend.fulltext import ts_query


def _target_version(environment: str | None) -> ColumnElement[int | None] | Mapped[int | None]:
    """The version whose status counts: main's, or the one an environment serves."""
    if environment is None:
        return Dashboard.main_version_id
    return (
        select(EnvironmentState.version_id)
        .where(
            EnvironmentState.dashboard_id == Dashboard.id,
            EnvironmentState.environment == environment,
        )
        .correlate(Dashboard)
        .scalar_subquery()
    )


def _status_column(environment: str | None) -> ColumnElement[str]:
    latest = (
        select(ValidationRun.status)
        .where(ValidationRun.version_id == _target_version(environment))
        .order_by(ValidationRun.started_at.desc(), ValidationRun.id.desc())
        .limit(1)
        .correlate(Dashboard)
        .scalar_subquery()
    )
    return func.coalesce(latest, literal("unknown"))


def _filtered(
    query: str | None, status: str | None, tag: str | None, environment: str | None
) -> tuple[Select[Dashboard], ColumnElement[float] | None]:
    stmt = select(Dashboard)
    rank: ColumnElement[float] | None = None
    tsq = ts_query(query) if query else None
    if query and tsq is None:
        stmt = stmt.where(literal(False))
    elif tsq is not None:
        q = func.to_tsquery("simple", tsq)
        stmt = stmt.where(Dashboard.search.op("@@")(q))
        rank = func.ts_rank(Dashboard.search, q)
    if tag:
        stmt = stmt.where(Dashboard.tags.contains([tag]))
    if status:
        stmt = stmt.where(_status_column(environment) == status)
    return stmt, rank


async def search(
    *,
    session: AsyncSession,
    query: str | None,
    status: str | None,
    tag: str | None,
    environment: str | None,
    limit: int,
    offset: int,
    settings: Settings | None = None,
) -> DashboardPage:
    """Dashboards matching `query` (title, tags, description), best match first."""
    stmt, rank = _filtered(query, status, tag, environment)
    hidden = await sources.hidden()  # person mode: what their Superset hides
    if hidden is not None:
        stmt = stmt.where(hidden)
    total = await session.scalar(select(func.count()).select_from(stmt.subquery()))
    order = [rank.desc(), Dashboard.id] if rank is not None else [Dashboard.id]
    dashboards = list(await session.scalars(stmt.order_by(*order).limit(limit).offset(offset)))
    envs = await service.environments(session=session, dashboards=dashboards)
    targets = {d.id: _target_of(d, envs[d.id], environment) for d in dashboards}
    runs = await service.latest_runs(session=session, version_ids=targets.values())
    links = await sources.links(
        session=session, settings=settings, dashboard_ids=[d.id for d in dashboards]
    )
    items = [
        service.summary(d, runs.get(targets[d.id] or 0), envs[d.id], links.get(d.id))
        for d in dashboards
    ]
    return DashboardPage(items=items, total=int(total or 0))


def _target_of(dashboard: Dashboard, envs: Environments, environment: str | None) -> int | None:
    if environment is None:
        return dashboard.main_version_id
    served: EnvironmentRead | None = getattr(envs, environment)
    return served.version_id if served else None
