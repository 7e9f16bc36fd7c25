"""A Superset chart's query in Superset's own words: the form data (`params`, what Explore
shows) and the query context (what the chart data API runs), built from one `Spec` for each
supported viz type. Verified on 6.1: a saved chart runs its query context, not its params,
so both are written (SUPERSET.md, "Chart edits")."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from common.tool_arguments import ColumnMetric, Filter, SqlMetric

TIMESERIES = frozenset({"echarts_timeseries_line", "echarts_timeseries_bar"})
SUPPORTED = frozenset({"table", "big_number_total", "pie"}) | TIMESERIES
SINGLE_METRIC = frozenset({"big_number_total", "pie"})
NO_TIME_FILTER = "No filter"
DEFAULT_ROW_LIMIT = 1000
TIME_GRAIN = "P1D"
MANAGED = (
    "viz_type", "metrics", "metric", "groupby", "adhoc_filters", "x_axis", "time_range",
    "row_limit", "granularity_sqla", "time_grain_sqla", "query_mode", "datasource",
)  # fmt: skip


@dataclass(frozen=True)
class Spec:
    """What a chart computes: metrics and filters already in Superset's form."""

    viz_type: str
    metrics: tuple[Any, ...]
    groupby: tuple[Any, ...]
    filters: tuple[dict[str, Any], ...]  # adhoc filters, without the time range
    x_axis: str | None
    time_range: str
    row_limit: int


def from_params(viz_type: str, params: dict[str, Any]) -> Spec:
    """The spec a saved chart's form data says."""
    metrics = params.get("metrics") or ([params["metric"]] if params.get("metric") else [])
    filters = [
        f
        for f in params.get("adhoc_filters") or []
        if isinstance(f, dict) and f.get("operator") != "TEMPORAL_RANGE"
    ]
    return Spec(
        viz_type=viz_type,
        metrics=tuple(metrics),
        groupby=tuple(params.get("groupby") or []),
        filters=tuple(filters),
        x_axis=params.get("x_axis") or params.get("granularity_sqla") or None,
        time_range=str(params.get("time_range") or NO_TIME_FILTER),
        row_limit=int(params.get("row_limit") or DEFAULT_ROW_LIMIT),
    )


def metric(value: str | ColumnMetric | SqlMetric) -> Any:
    """A contract metric in Superset's form (a saved metric stays its name)."""
    if isinstance(value, str):
        return value
    if isinstance(value, ColumnMetric):
        return {
            "expressionType": "SIMPLE",
            "column": {"column_name": value.column},
            "aggregate": value.aggregate,
            "label": value.label or f"{value.aggregate}({value.column})",
        }
    return {"expressionType": "SQL", "sqlExpression": value.sql, "label": value.label}


def adhoc_filter(value: Filter) -> dict[str, Any]:
    found: dict[str, Any] = {
        "expressionType": "SIMPLE",
        "subject": value.column,
        "operator": value.op,
        "clause": "WHERE",
    }
    if value.op not in ("IS NULL", "IS NOT NULL"):
        found["comparator"] = value.value
    return found


def apply(spec: Spec, fields: dict[str, Any]) -> Spec:
    """`spec` with the contract's fields (as given in a change) set."""
    changed: dict[str, Any] = {}
    for name in ("viz_type", "x_axis", "time_range", "row_limit"):
        if name in fields:
            changed[name] = fields[name]
    if "metrics" in fields:
        changed["metrics"] = tuple(metric(m) for m in fields["metrics"])
    if "groupby" in fields:
        changed["groupby"] = tuple(fields["groupby"])
    if "filters" in fields:
        changed["filters"] = tuple(adhoc_filter(f) for f in fields["filters"])
    return replace(spec, **changed)


def time_column(spec: Spec, main_dttm_col: str | None) -> str | None:
    return spec.x_axis or main_dttm_col or None


def label(value: Any) -> str:
    return value if isinstance(value, str) else str(value.get("label") or "")


def _query_filters(spec: Spec, time_col: str | None) -> tuple[list[dict[str, Any]], str]:
    filters: list[dict[str, Any]] = []
    where: list[str] = []
    for f in spec.filters:
        if f.get("expressionType") == "SQL":
            where.append(f"({f.get('sqlExpression')})")
        else:
            one = {"col": f.get("subject"), "op": f.get("operator")}
            if "comparator" in f:
                one["val"] = f["comparator"]
            filters.append(one)
    if time_col and spec.time_range != NO_TIME_FILTER:
        filters.append({"col": time_col, "op": "TEMPORAL_RANGE", "val": spec.time_range})
    return filters, " AND ".join(where)


def form_data(
    spec: Spec, dataset_id: int, main_dttm_col: str | None, old: dict[str, Any]
) -> dict[str, Any]:
    """The chart's params: what it had, with every field this module manages rewritten."""
    time_col = time_column(spec, main_dttm_col)
    params = {k: v for k, v in old.items() if k not in MANAGED}
    filters = list(spec.filters)
    if time_col and spec.time_range != NO_TIME_FILTER:
        filters.append(
            {
                "expressionType": "SIMPLE",
                "subject": time_col,
                "operator": "TEMPORAL_RANGE",
                "comparator": spec.time_range,
                "clause": "WHERE",
            }
        )
    params.update(
        datasource=f"{dataset_id}__table",
        viz_type=spec.viz_type,
        adhoc_filters=filters,
        time_range=spec.time_range,
        row_limit=spec.row_limit,
    )
    if spec.viz_type in SINGLE_METRIC:
        params["metric"] = spec.metrics[0] if spec.metrics else None
    else:
        params["metrics"] = list(spec.metrics)
    if spec.viz_type != "big_number_total":
        params["groupby"] = list(spec.groupby)
    if spec.viz_type == "table":
        params["query_mode"] = "aggregate"
    if spec.viz_type in TIMESERIES:
        params.update(x_axis=time_col, time_grain_sqla=TIME_GRAIN)
    return params


def query_context(
    spec: Spec, dataset_id: int, main_dttm_col: str | None, params: dict[str, Any]
) -> dict[str, Any]:
    """What the chart data API runs for this spec."""
    time_col = time_column(spec, main_dttm_col)
    filters, where = _query_filters(spec, time_col)
    metrics = list(spec.metrics[:1] if spec.viz_type in SINGLE_METRIC else spec.metrics)
    columns: list[Any] = [] if spec.viz_type == "big_number_total" else list(spec.groupby)
    query: dict[str, Any] = {
        "columns": columns,
        "metrics": metrics,
        "filters": filters,
        "extras": {"where": where, "having": ""},
        "orderby": [[metrics[0], False]] if metrics and columns else [],
        "row_limit": spec.row_limit,
    }
    if spec.viz_type in TIMESERIES and time_col:
        axis = {
            "timeGrain": TIME_GRAIN,
            "columnType": "BASE_AXIS",
            "sqlExpression": time_col,
            "label": time_col,
            "expressionType": "SQL",
        }
        query.update(columns=[axis, *columns], series_columns=columns)
    return {
        "datasource": {"id": dataset_id, "type": "table"},
        "force": False,
        "queries": [query],
        "form_data": params,
        "result_format": "json",
        "result_type": "full",
    }
