"""The built-in dashboard source: each chart is SQL on a configured datasource, run here
through the read-only path (validation, chart data) and edited by the definition's own
changes (add / update / remove). A deploy only records what an environment serves."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError
from sqlalchemy import ColumnElement
from sqlalchemy.ext.asyncio import AsyncSession

from backend.codes import Code
from backend.config import Settings
from backend.dashboards.definition import AddChart, Change, Definition, apply_changes
from backend.dashboards.models import Dashboard, DashboardVersion
from backend.dashboards.schemas import ChartDataRead, SupersetSource
from backend.dashboards.source import Chart, Outcome, Target
from backend.datasources.readonly import QueryResult, execute_readonly
from backend.errors import AppError, NotFound, Unprocessable

ROW_LIMIT = 50  # rows a validation reads of each chart
CONCURRENCY = 4  # charts of one run queried at once
DETAIL_KEYS = ("reason", "error", "detail")


class ChartInvalid(Unprocessable):
    """The chart's definition cannot produce what it promises."""

    code = Code.CHART_INVALID


def invalid_definition(message: str, errors: list[dict[str, Any]]) -> Unprocessable:
    return Unprocessable(message, code=Code.INVALID_DEFINITION, details={"errors": errors})


def _error_text(exc: AppError) -> str:
    """The error's message plus any explanation its details carry (the driver's own words)."""
    parts = [exc.message]
    for key in DETAIL_KEYS:
        value = exc.details.get(key)
        if isinstance(value, str) and value and value not in exc.message:
            parts.append(value)
    return f"{exc.code}: " + " — ".join(parts)


def _missing(chart: Chart, columns: list[str]) -> list[str]:
    returned = {c.lower() for c in columns}
    return [c for c in chart.get("expected_columns", []) if c.lower() not in returned]


def _missing_message(missing: list[str], columns: list[str]) -> str:
    return (
        f"Missing expected column(s): {', '.join(missing)}; "
        f"the query returned: {', '.join(columns) or 'no columns'}"
    )


async def check_chart(*, settings: Settings, chart: Chart) -> Outcome:
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
    missing = _missing(chart, result.columns)
    if missing:
        message = _missing_message(missing, result.columns)
        return Outcome("failing", message, elapsed, result.row_count)
    if result.row_count == 0:
        return Outcome("warning", "The query returned no rows", elapsed, 0)
    more = "+" if result.truncated else ""
    return Outcome("ok", f"{result.row_count}{more} rows", elapsed, result.row_count)


async def _rows(settings: Settings, chart: Chart, where: dict[str, Any]) -> QueryResult:
    datasource = str(chart.get("datasource", ""))
    try:
        return await execute_readonly(settings=settings, datasource=datasource, sql=chart["sql"])
    except NotFound as exc:  # the only NotFound here: the datasource is not configured
        raise ChartInvalid(
            f"Chart '{where['chart_key']}' reads datasource '{datasource}', "
            "which is not configured",
            details={**where, "datasource": datasource},
        ) from exc
    except AppError as exc:
        # The query's own envelope (code, status, message), saying which chart it was.
        exc.details = {**exc.details, **where}
        raise


class Builtin:
    """The built-in domain's dashboards (every definition no other source claims)."""

    live = False

    def claims(self, definition: dict[str, Any]) -> bool:
        return True

    async def commit(
        self, *, settings: Settings, definition: dict[str, Any], changes: list[Change]
    ) -> dict[str, Any]:
        """The definition re-validated as a whole; datasources of touched charts must exist."""
        try:
            model = Definition.model_validate(apply_changes(definition, changes))
        except ValidationError as exc:
            errors = [{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()]
            raise invalid_definition("The resulting definition is invalid", errors) from exc
        touched = {
            getattr(c.chart, "key", "") if isinstance(c, AddChart) else c.key for c in changes
        }
        errors = [
            {"loc": ["charts", i, "datasource"], "msg": f"unknown datasource: {chart.datasource}"}
            for i, chart in enumerate(model.charts)
            if chart.key in touched and chart.datasource not in settings.datasources
        ]
        if errors:
            raise invalid_definition("A chart names a datasource that is not configured", errors)
        return model.model_dump()

    async def run_charts(
        self, *, settings: Settings, target: Target, charts: list[Chart]
    ) -> list[Outcome]:
        gate = asyncio.Semaphore(CONCURRENCY)

        async def one(chart: Chart) -> Outcome:
            async with gate:
                return await check_chart(settings=settings, chart=chart)

        return list(await asyncio.gather(*(one(c) for c in charts)))

    async def chart_data(
        self,
        *,
        settings: Settings,
        version: DashboardVersion,
        chart: Chart,
        environment: str | None,
        where: dict[str, Any],
    ) -> ChartDataRead:
        result = await _rows(settings, chart, where)
        missing = _missing(chart, result.columns)
        if missing:
            raise ChartInvalid(
                _missing_message(missing, result.columns),
                details={**where, "missing": missing, "returned": result.columns},
            )
        return ChartDataRead(
            chart_key=where["chart_key"],
            title=str(chart.get("title", where["chart_key"])),
            type=str(chart.get("type", "table")),
            version_id=version.id,
            columns=result.columns,
            rows=result.rows,
            row_count=result.row_count,
            truncated=result.truncated,
            elapsed_ms=result.elapsed_ms,
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
        """Nothing outside the platform: the deployment row is what an environment serves."""

    async def chart_links(
        self, *, settings: Settings, version: DashboardVersion
    ) -> dict[str, dict[str, str]]:
        return {}  # its charts live only here

    async def links(
        self, *, session: AsyncSession, settings: Settings | None, dashboard_ids: Iterable[int]
    ) -> dict[int, SupersetSource]:
        return {}

    async def hidden(self) -> ColumnElement[bool] | None:
        return None  # the platform's roles alone decide who sees a built-in dashboard

    async def check_visible(self, session: AsyncSession, dashboard_id: int) -> None:
        return None


BUILTIN = Builtin()
