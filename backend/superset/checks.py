"""Before a commit to a Superset dashboard is stored: each chart it adds or changes checked
against its dataset for what Superset would let through silently (verified on 6.1: an
unknown viz type, a filter on an unknown column, an unparseable time range), then run on the
staging Superset through its chart data API with the new query context."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from backend.codes import Code
from backend.errors import Unprocessable
from backend.superset import forms, time_ranges
from backend.superset.client import SupersetClient, superset_message
from backend.superset.edits import Touched

log = logging.getLogger("backend.superset")

CONCURRENCY = 4


def _columns(dataset: dict[str, Any]) -> set[str]:
    return {str(c.get("column_name")) for c in dataset.get("columns") or []}


def _unknown_columns(touched: Touched) -> list[str]:
    spec, columns = touched.spec, _columns(touched.dataset)
    wanted = [g for g in spec.groupby if isinstance(g, str)]
    wanted += [
        str(f.get("subject"))
        for f in spec.filters
        if f.get("expressionType") == "SIMPLE" and isinstance(f.get("subject"), str)
    ]
    if spec.x_axis:
        wanted.append(spec.x_axis)
    return sorted({c for c in wanted if c not in columns})


def platform_message(touched: Touched) -> str | None:
    """What the platform refuses itself; None when the chart may go to Superset."""
    spec = touched.spec
    table = touched.dataset.get("table_name")
    if spec.viz_type not in forms.SUPPORTED:
        return (
            f"Unsupported viz type {spec.viz_type!r}: one of {', '.join(sorted(forms.SUPPORTED))}"
        )
    missing = _unknown_columns(touched)
    if missing:
        return f"Columns missing in dataset {table!r}: {missing}"
    if not spec.metrics:
        return "A chart needs at least one metric"
    time_col = forms.time_column(spec, touched.dataset.get("main_dttm_col"))
    if spec.viz_type in forms.TIMESERIES and not time_col:
        return f"Dataset {table!r} has no time column for the x axis: set x_axis"
    if spec.time_range != forms.NO_TIME_FILTER and not time_col:
        return f"Dataset {table!r} has no time column to apply the time range to: set x_axis"
    return None


def _rison(value: str) -> str:
    """A string in rison (Superset's query parameter syntax)."""
    return "'" + value.replace("!", "!!").replace("'", "!'") + "'"


async def _time_range(staging: SupersetClient, value: str) -> str | None:
    """Superset's own parse of a time range (its /api/v1/time_range/); None when it parses."""
    if value == forms.NO_TIME_FILTER:
        return None
    if not time_ranges.parses(value):
        return f"Time range {value!r} is not in Superset's syntax (e.g. 'Last week', 'No filter')"
    response = await staging.request("GET", "/api/v1/time_range/", params={"q": _rison(value)})
    if response.status_code in (401, 403, 404):
        return None  # this Superset does not let the account ask: the run judges it
    if response.is_error:
        return f"Time range {value!r} is not understood: {superset_message(response)}"
    return None


async def _run(staging: SupersetClient, context: dict[str, Any]) -> str | None:
    response = await staging.request("POST", "/api/v1/chart/data", json=context)
    if response.is_error:
        return superset_message(response)
    result = (response.json().get("result") or [{}])[0]
    return str(result["error"])[:500] if result.get("error") else None


async def check_one(staging: SupersetClient, touched: Touched) -> str | None:
    """Why this chart cannot be stored; None when it runs on staging."""
    return (
        platform_message(touched)
        or await _time_range(staging, touched.spec.time_range)
        or await _run(staging, touched.query_context)
    )


async def check(
    staging: SupersetClient, charts: list[Touched], refused: list[dict[str, Any]]
) -> None:
    """Every chart checked; 422 VALIDATION_FAILED naming each that fails (with those the
    edit itself `refused`)."""
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(touched: Touched) -> dict[str, Any] | None:
        async with gate:
            started = time.perf_counter()
            message = await check_one(staging, touched)
            log.info(
                "superset commit check %s: %.0f ms",
                touched.title,
                (time.perf_counter() - started) * 1000,
            )
        if message is None:
            return None
        return {"key": touched.key, "title": touched.title, "message": message}

    ran = await asyncio.gather(*(one(t) for t in charts))
    failed = [*refused, *(f for f in ran if f is not None)]
    if failed:
        raise Unprocessable(
            f"{len(failed)} chart(s) would not run on staging: nothing was committed",
            code=Code.VALIDATION_FAILED,
            details={"charts": failed},
        )
