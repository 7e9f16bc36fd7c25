"""The chart edits `commit_changes` accepts, mirroring the backend's commit schema
(POST /api/branches/{id}/commits), so a malformed edit is refused before any HTTP call."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

MAX_CHANGES = 50

ChartKey = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")]
ChartType = Literal["line", "bar", "area", "pie", "table", "number"]
Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
DatasourceName = Annotated[str, StringConstraints(min_length=1, max_length=64)]
Sql = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=20_000)]
ExpectedColumns = Annotated[
    list[Annotated[str, StringConstraints(min_length=1, max_length=128)]], Field(max_length=50)
]


class Chart(BaseModel):
    """A whole chart: the SQL it runs on a datasource and the columns it must return."""

    model_config = ConfigDict(extra="forbid")

    key: ChartKey = Field(description="Stable chart key: lowercase letters, digits, _ and -")
    title: Title
    type: ChartType
    datasource: DatasourceName = Field(description="Datasource name, e.g. sample")
    sql: Sql = Field(description="One read-only SELECT")
    expected_columns: ExpectedColumns = Field(
        default_factory=list, description="Columns the query must return"
    )


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


class NewChart(QueryFields):
    """A chart added to a Superset dashboard, on the staging Superset's dataset `dataset`."""

    title: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
    viz_type: VizType
    dataset: Annotated[str, StringConstraints(min_length=1, max_length=250)] = Field(
        description="The table name of a dataset of the staging Superset"
    )


class ChartPatch(QueryFields):
    """The fields to change on an existing chart; at least one. A built-in chart takes
    title, type, datasource, sql, expected_columns; a Superset chart (key: its UUID) takes
    title and the query fields."""

    model_config = ConfigDict(extra="forbid")

    title: Title | None = None
    type: ChartType | None = None
    datasource: DatasourceName | None = None
    sql: Sql | None = None
    expected_columns: ExpectedColumns | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> ChartPatch:
        if not self.model_fields_set:
            raise ValueError("an update must change at least one field")
        return self


class AddChart(BaseModel):
    """Add a new chart."""

    model_config = ConfigDict(extra="forbid")

    op: Literal["add"]
    chart: Chart | NewChart


class UpdateChart(BaseModel):
    """Change fields of the chart with this key."""

    model_config = ConfigDict(extra="forbid")

    op: Literal["update"]
    key: ChartKey
    chart: ChartPatch


class RemoveChart(BaseModel):
    """Remove the chart with this key."""

    model_config = ConfigDict(extra="forbid")

    op: Literal["remove"]
    key: ChartKey


Change = Annotated[AddChart | UpdateChart | RemoveChart, Field(discriminator="op")]
