"""Validation: run every chart's SQL through the read-only path and judge what comes back."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.config import Settings
from backend.dashboards import service
from backend.dashboards.models import (
    ENVIRONMENTS,
    ChartResult,
    Dashboard,
    DashboardVersion,
    ValidationRun,
)
from backend.dashboards.schemas import ChartError, ChartResultRead, HealthRead, RunRead, RunSummary
from backend.datasources.readonly import execute_readonly
from backend.db import utcnow
from backend.errors import AppError, NotFound, Unprocessable
from backend.oplogs import service as oplogs
from backend.principal import Principal
from backend.superset import bundle as superset_bundle
from backend.superset import charts as superset_charts

ROW_LIMIT = 50
CONCURRENCY = 4  # charts of one run queried at once
HISTORY = 10
SEVERITY = {"ok": 0, "warning": 1, "failing": 2}
DETAIL_KEYS = ("reason", "error", "detail")


@dataclass(frozen=True)
class Outcome:
    status: str
    message: str
    elapsed_ms: float
    row_count: int | None
    code: str | None = None  # set for a Superset chart that failed


def _error_text(exc: AppError) -> str:
    """The error's message plus any explanation its details carry (the driver's own words)."""
    parts = [exc.message]
    for key in DETAIL_KEYS:
        value = exc.details.get(key)
        if isinstance(value, str) and value and value not in exc.message:
            parts.append(value)
    return f"{exc.code}: " + " — ".join(parts)


async def check_chart(*, settings: Settings, chart: dict[str, Any]) -> Outcome:
    """ok, warning (no rows) or failing (SQL error, missing expected columns)."""
    started = time.perf_counter()
    try:
        result = await execute_readonly(
            settings=settings, datasource=chart["datasource"], sql=chart["sql"], limit=ROW_LIMIT
        )
    except AppError as exc:
        elapsed = (time.perf_counter() - started) * 1000
        return Outcome("failing", _error_text(exc), elapsed, None)
    elapsed = (time.perf_counter() - started) * 1000
    returned = {c.lower() for c in result.columns}
    missing = [c for c in chart.get("expected_columns", []) if c.lower() not in returned]
    if missing:
        message = (
            f"Missing expected column(s): {', '.join(missing)}; "
            f"the query returned: {', '.join(result.columns) or 'no columns'}"
        )
        return Outcome("failing", message, elapsed, result.row_count)
    if result.row_count == 0:
        return Outcome("warning", "The query returned no rows", elapsed, 0)
    more = "+" if result.truncated else ""
    return Outcome("ok", f"{result.row_count}{more} rows", elapsed, result.row_count)


async def _check_all(settings: Settings, charts: list[dict[str, Any]]) -> list[Outcome]:
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(chart: dict[str, Any]) -> Outcome:
        async with gate:
            return await check_chart(settings=settings, chart=chart)

    return list(await asyncio.gather(*(one(c) for c in charts)))


async def _outcomes(
    settings: Settings, target: service.Target, charts: list[dict[str, Any]]
) -> list[Outcome]:
    """Each chart's outcome: its SQL here, or (a Superset dashboard) its saved query in the
    Superset of the environment validated (staging for a ref: its charts are staging's)."""
    definition = target.version.definition
    if not superset_bundle.is_superset(definition):
        return await _check_all(settings, charts)
    runs = await superset_charts.run_charts(
        settings=settings,
        environment=target.ref if target.ref in ENVIRONMENTS else "staging",
        dashboard_uuid=definition["superset"]["uuid"],
        charts=charts,
    )
    return [Outcome(r.status, r.message, r.elapsed_ms, r.row_count, r.code) for r in runs]


async def run(
    *,
    session: AsyncSession,
    settings: Settings,
    dashboard: Dashboard,
    target: service.Target,
    triggered_by: str,
) -> RunRead:
    """Validate one version and add the run, its chart results and failure logs (no commit)."""
    started_at = utcnow()
    clock = time.perf_counter()
    charts: list[dict[str, Any]] = target.version.definition.get("charts", [])
    outcomes = await _outcomes(settings, target, charts)
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
) -> service.Target:
    if ref is not None and environment is not None:
        raise Unprocessable("Give either ref or environment, not both")
    if environment is None:
        return await service.resolve_ref(session=session, dashboard=dashboard, ref=ref or "main")
    version = await service.environment_version(
        session=session, dashboard=dashboard, environment=environment
    )
    if version is None:
        raise NotFound(f"Nothing is deployed to {environment} for dashboard {dashboard.id}")
    return service.Target(version, environment)


async def health(
    *,
    session: AsyncSession,
    settings: Settings,
    actor: Principal,
    dashboard_id: int,
    environment: str | None,
) -> HealthRead:
    """The latest run of main's version (or the version an environment serves) and history;
    a Superset dashboard's charts are run through its Superset first (a new run)."""
    dashboard = await service.get(session=session, dashboard_id=dashboard_id)
    if await _is_superset(session, dashboard):
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


async def _is_superset(session: AsyncSession, dashboard: Dashboard) -> bool:
    main = await session.get(DashboardVersion, dashboard.main_version_id or 0)
    return main is not None and superset_bundle.is_superset(main.definition)


async def _with_charts(session: AsyncSession, validation: ValidationRun) -> RunRead:
    results = await session.scalars(
        select(ChartResult).where(ChartResult.run_id == validation.id).order_by(ChartResult.id)
    )
    return _read(validation, list(results))
