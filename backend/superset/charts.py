"""Running a Superset dashboard's charts through an environment's chart data API (each chart's
saved query), for validation, health and the chart data the browser draws."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

import httpx

from backend.codes import Code
from backend.config import Settings
from backend.errors import NotFound
from backend.superset.client import SupersetClient, client, superset_message

CONCURRENCY = 4
ROW_LIMIT = 1000
CHART_ERROR = Code.SUPERSET_CHART_ERROR
CHART_MISSING = Code.SUPERSET_CHART_MISSING
TEMPORAL = 2  # Superset's GenericDataType.TEMPORAL in a result's `coltypes`


@dataclass(frozen=True)
class ChartRun:
    """What one chart's run came to; `code` is set when it failed."""

    status: str
    message: str
    elapsed_ms: float
    row_count: int | None
    code: str | None = None
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()
    temporal: tuple[str, ...] = ()


async def chart_ids(superset: SupersetClient, dashboard_uuid: str) -> dict[str, int]:
    """Chart UUID -> that instance's chart id, from the dashboard's layout there."""
    try:
        body = await superset.json("GET", f"/api/v1/dashboard/{dashboard_uuid}")
    except NotFound:
        return {}
    position = json.loads(body["result"].get("position_json") or "{}")
    return {
        str(node["meta"]["uuid"]): int(node["meta"]["chartId"])
        for node in position.values()
        if isinstance(node, dict)
        and node.get("type") == "CHART"
        and node.get("meta", {}).get("uuid")
        and node["meta"].get("chartId")
    }


async def run_chart(superset: SupersetClient, chart_id: int | None, title: str) -> ChartRun:
    """One chart's saved query, forced past Superset's cache."""
    if chart_id is None:
        message = f"Chart '{title}' is not on this dashboard in the {superset.environment} Superset"
        return ChartRun("failing", message, 0.0, None, CHART_MISSING)
    started = time.perf_counter()
    response = await superset.request(
        "GET", f"/api/v1/chart/{chart_id}/data/", params={"force": "true"}
    )
    return _outcome(response, (time.perf_counter() - started) * 1000)


async def run_query(superset: SupersetClient, context: dict[str, Any]) -> ChartRun:
    """A query context run as it is (a version's chart, before it is saved anywhere)."""
    started = time.perf_counter()
    response = await superset.request("POST", "/api/v1/chart/data", json={**context, "force": True})
    return _outcome(response, (time.perf_counter() - started) * 1000)


def _outcome(response: httpx.Response, elapsed: float) -> ChartRun:
    if response.is_error:
        return ChartRun("failing", superset_message(response), elapsed, None, CHART_ERROR)
    result = (response.json().get("result") or [{}])[0]
    if result.get("error"):
        return ChartRun("failing", str(result["error"])[:500], elapsed, None, CHART_ERROR)
    columns = tuple(str(c) for c in result.get("colnames") or [])
    data = result.get("data") or []
    rows = tuple(tuple(row.get(c) for c in columns) for row in data[:ROW_LIMIT])
    types = result.get("coltypes") or []
    temporal = tuple(c for c, kind in zip(columns, types, strict=False) if kind == TEMPORAL)
    if not rows:
        return ChartRun("warning", "The chart's query returned no rows", elapsed, 0, None, columns)
    return ChartRun("ok", f"{len(data)} rows", elapsed, len(data), None, columns, rows, temporal)


async def run_charts(
    *,
    settings: Settings,
    environment: str,
    dashboard_uuid: str,
    charts: list[dict[str, Any]],
    contexts: dict[str, dict[str, Any]] | None = None,
) -> list[ChartRun]:
    """Every chart of the definition, run in `environment`'s Superset (in order): each chart's
    query context from `contexts` (chart UUID -> query context) when given, else the chart
    as saved there."""
    superset = client(settings, environment)
    ids = await chart_ids(superset, dashboard_uuid) if contexts is None else {}
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(chart: dict[str, Any]) -> ChartRun:
        async with gate:
            context = (contexts or {}).get(chart["uuid"])
            if context is not None:
                return await run_query(superset, context)
            if contexts is not None and chart["uuid"] not in ids:
                ids.update(await chart_ids(superset, dashboard_uuid))
            return await run_chart(superset, ids.get(chart["uuid"]), chart["title"])

    return list(await asyncio.gather(*(one(c) for c in charts)))
