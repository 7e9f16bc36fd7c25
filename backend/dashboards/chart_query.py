"""What a chart computes, in the words of a commit to a Superset dashboard: viz type, metrics,
group-by, filters, x axis, time range, row limit (CONTRACT.md, "Repairs on Superset").

These are the API's shapes only; the Superset source turns them into Superset's own form data
and query context (`backend/superset/forms.py`). The built-in domain refuses them: its charts
are SQL.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

ColumnName = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Label = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=128)]
VizType = Annotated[str, StringConstraints(min_length=1, max_length=64)]
TimeRange = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Aggregate = Literal["SUM", "AVG", "COUNT", "COUNT_DISTINCT", "MIN", "MAX"]
FilterOp = Literal[
    "==", "!=", ">", ">=", "<", "<=", "IN", "NOT IN", "IS NULL", "IS NOT NULL", "LIKE"
]
Scalar = str | int | float | bool


class ColumnMetric(BaseModel):
    """An aggregate of one column."""

    model_config = ConfigDict(extra="forbid")

    column: ColumnName
    aggregate: Aggregate
    label: Label | None = None


class SqlMetric(BaseModel):
    """A SQL expression with its label."""

    model_config = ConfigDict(extra="forbid")

    sql: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
    label: Label


Metric = Annotated[str, StringConstraints(min_length=1, max_length=128)] | ColumnMetric | SqlMetric


class Filter(BaseModel):
    """One condition on a column (`value` a list for IN / NOT IN, absent for the NULL tests)."""

    model_config = ConfigDict(extra="forbid")

    column: ColumnName
    op: FilterOp
    value: Scalar | list[Scalar] | None = None


class QueryFields(BaseModel):
    """The fields a Superset chart edit may set; each absent one stays as it was."""

    model_config = ConfigDict(extra="forbid")

    viz_type: VizType | None = Field(
        default=None,
        description="Superset's viz type: table, big_number_total, pie, "
        "echarts_timeseries_line, echarts_timeseries_bar",
    )
    metrics: Annotated[list[Metric], Field(min_length=1, max_length=10)] | None = Field(
        default=None,
        description='Saved metric name ("count"), {column, aggregate, label?} or {sql, label}',
    )
    groupby: Annotated[list[ColumnName], Field(max_length=10)] | None = None
    filters: Annotated[list[Filter], Field(max_length=20)] | None = Field(
        default=None, description="Replace the chart's filters"
    )
    x_axis: ColumnName | None = Field(default=None, description="A time column (timeseries)")
    time_range: TimeRange | None = Field(
        default=None, description='Superset\'s syntax: "No filter", "Last week", ...'
    )
    row_limit: int | None = Field(default=None, ge=1, le=50_000)


QUERY_FIELDS = frozenset(QueryFields.model_fields)


class NewChart(QueryFields):
    """A chart added to a Superset dashboard, on the staging Superset's dataset `dataset`."""

    title: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
    viz_type: VizType
    dataset: Annotated[str, StringConstraints(min_length=1, max_length=250)] = Field(
        description="The table name of a dataset of the staging Superset"
    )


def query_fields(model: BaseModel) -> dict[str, Any]:
    """The query fields a change sets (as given), without the others."""
    return {name: getattr(model, name) for name in model.model_fields_set if name in QUERY_FIELDS}
