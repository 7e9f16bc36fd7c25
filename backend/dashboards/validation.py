"""Validation: run every chart through its dashboard's source and judge what comes back."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.config import Settings
from backend.dashboards import service, sources
from backend.dashboards.models import (
    ChartResult,
    Dashboard,
    DashboardVersion,
    ValidationRun,
)
from backend.dashboards.schemas import ChartError, ChartResultRead, HealthRead, RunRead, RunSummary
from backend.dashboards.source import Outcome, Target
from backend.db import utcnow
from backend.errors import NotFound, Unprocessable
from backend.oplogs import service as oplogs
from backend.principal import Principal

HISTORY = 10
SEVERITY = {"ok": 0, "warning": 1, "failing": 2}


async def _outcomes(
    target: Target, settings: Settings, charts: list[dict[str, Any]]
) -> list[Outcome]:
    """Each chart's outcome, from the source of the version validated."""
    return await sources.of(target.version.definition).run_charts(
        settings=settings, target=target, charts=charts
    )


async def run(
    *,
    session: AsyncSession,
    settings: Settings,
    dashboard: Dashboard,
    target: Target,
    triggered_by: str,
) -> RunRead:
    """Validate one version and add the run, its chart results and failure logs (no commit)."""
    started_at = utcnow()
    clock = time.perf_counter()
    charts: list[dict[str, Any]] = target.version.definition.get("charts", [])
    outcomes = await _outcomes(target, settings, charts)
    worst = max((SEVERITY[o.status] for o in outcomes), default=SEVERITY["warning"])
    validation = ValidationRun(
        dashboard_id=dashboard.id,
        version_id=target.version.id,
        ref=target.ref,
        status=next(s for s, rank in SEVERITY.items() if rank == worst),
        started_at=started_at,
        elapsed_ms=(time.perf_counter() - clock) * 1000,
        triggered_by=triggered_by,
    )
    session.add(validation)
    await session.flush()
    results = [
        _result(validation, chart, outcome) for chart, outcome in zip(charts, outcomes, strict=True)
    ]
    session.add_all(results)
    for result in results:
        if result.status == "failing":
            _log_failure(session, dashboard, validation, result)
    await session.flush()
    return _read(validation, results)


def _result(validation: ValidationRun, chart: dict[str, Any], outcome: Outcome) -> ChartResult:
    return ChartResult(
        run_id=validation.id,
        chart_key=chart["key"],
        chart_title=chart.get("title", chart["key"]),
        status=outcome.status,
        message=outcome.message,
        elapsed_ms=outcome.elapsed_ms,
        row_count=outcome.row_count,
        error_code=outcome.code,
    )


def _log_failure(
    session: AsyncSession, dashboard: Dashboard, validation: ValidationRun, result: ChartResult
) -> None:
    oplogs.write(
        session=session,
        level="error",
        source="dashboards.validation",
        message=(
            f"Dashboard {dashboard.id} ({dashboard.title}): chart '{result.chart_title}' "
            f"failed validation: {result.message}"
        ),
        dashboard_id=dashboard.id,
        details={
            "validation_run_id": validation.id,
            "version_id": validation.version_id,
            "ref": validation.ref,
            "chart_key": result.chart_key,
        },
    )


def _chart_read(result: ChartResult) -> ChartResultRead:
    read = ChartResultRead.model_validate(result)
    if result.error_code is not None:
        read.error = ChartError(code=result.error_code, message=result.message)
    return read


def _read(validation: ValidationRun, results: list[ChartResult]) -> RunRead:
    summary = RunSummary.model_validate(validation)
    charts = [_chart_read(r) for r in results]
    return RunRead(**summary.model_dump(), charts=charts)


async def validate(
    *,
    session: AsyncSession,
    settings: Settings,
    actor: Principal,
    dashboard_id: int,
    ref: str | None,
    environment: str | None,
) -> RunRead:
    """Validate main, a ref, or what an environment serves; store and audit the run."""
    dashboard = await service.get(session=session, dashboard_id=dashboard_id)
    target = await _target(session=session, dashboard=dashboard, ref=ref, environment=environment)
    result = await run(
        session=session,
        settings=settings,
        dashboard=dashboard,
        target=target,
        triggered_by=actor.username,
    )
    audit.record(
        session=session,
        actor=actor,
        action="dashboard.validate",
        resource_type="dashboard",
        resource_id=str(dashboard_id),
        details={"run_id": result.id, "version_id": result.version_id, "status": result.status},
    )
    await session.commit()
    return result


async def _target(
    *, session: AsyncSession, dashboard: Dashboard, ref: str | None, environment: str | None
) -> Target:
    if ref is not None and environment is not None:
        raise Unprocessable("Give either ref or environment, not both")
    if environment is None:
        return await service.resolve_ref(session=session, dashboard=dashboard, ref=ref or "main")
    version = await service.environment_version(
        session=session, dashboard=dashboard, environment=environment
    )
    if version is None:
        raise NotFound(f"Nothing is deployed to {environment} for dashboard {dashboard.id}")
    return Target(version, environment)


async def health(
    *,
    session: AsyncSession,
    settings: Settings,
    actor: Principal,
    dashboard_id: int,
    environment: str | None,
) -> HealthRead:
    """The latest run of main's version (or the version an environment serves) and history;
    a live source's charts are run first (a new run)."""
    dashboard = await service.get(session=session, dashboard_id=dashboard_id)
    if await _live(session, dashboard):
        target = await _target(
            session=session, dashboard=dashboard, ref=None, environment=environment
        )
        await run(
            session=session,
            settings=settings,
            dashboard=dashboard,
            target=target,
            triggered_by=actor.username,
        )
        await session.commit()
    if environment is None:
        version_id = dashboard.main_version_id
    else:
        served = await service.environment_version(
            session=session, dashboard=dashboard, environment=environment
        )
        version_id = served.id if served else None
    latest = (await service.latest_runs(session=session, version_ids=[version_id])).get(
        version_id or 0
    )
    history = await session.scalars(
        select(ValidationRun)
        .where(ValidationRun.dashboard_id == dashboard_id)
        .order_by(ValidationRun.started_at.desc(), ValidationRun.id.desc())
        .limit(HISTORY)
    )
    return HealthRead(
        dashboard_id=dashboard_id,
        target=environment or "main",
        version_id=version_id,
        status=latest.status if latest else "unknown",
        latest_run=await _with_charts(session, latest) if latest else None,
        history=[RunSummary.model_validate(r) for r in history],
    )


async def _live(session: AsyncSession, dashboard: Dashboard) -> bool:
    main = await session.get(DashboardVersion, dashboard.main_version_id or 0)
    return main is not None and sources.of(main.definition).live


async def _with_charts(session: AsyncSession, validation: ValidationRun) -> RunRead:
    results = await session.scalars(
        select(ChartResult).where(ChartResult.run_id == validation.id).order_by(ChartResult.id)
    )
    return _read(validation, list(results))
