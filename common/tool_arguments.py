"""The arguments of each of the agent's tools (CONTRACT.md, "Tools": names and arguments are
fixed), as Pydantic models: the one schema the model, an edited confirmation, a workflow step,
an MCP call and the backend's workflow files are checked against (common/tools.py pairs each
with its tool). Light: Pydantic only, so the backend reads them without the agent.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

# The chart edits `commit_changes` accepts: the backend's commit schema itself
# (POST /api/branches/{id}/commits, backend/dashboards/definition.py), so a malformed edit is
# refused before any HTTP call, with the text the backend would give.
MAX_CHANGES = 50

ChartKey = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")]
ChartType = Literal["line", "bar", "area", "pie", "table", "number"]
Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
ChartDatasource = Annotated[str, StringConstraints(min_length=1, max_length=64)]
Sql = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=20_000)]
ExpectedColumns = Annotated[
    list[Annotated[str, StringConstraints(min_length=1, max_length=128)]], Field(max_length=50)
]


def check_distinct(values: list[str], what: str) -> None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"duplicate {what}: {value}")
        seen.add(value)


class Chart(BaseModel):
    """A whole chart: the SQL it runs on a datasource and the columns it must return."""

    model_config = ConfigDict(extra="forbid")

    key: ChartKey = Field(description="Stable chart key: lowercase letters, digits, _ and -")
    title: Title
    type: ChartType
    datasource: ChartDatasource = Field(description="Datasource name, e.g. sample")
    sql: Sql = Field(description="One read-only SELECT")
    expected_columns: ExpectedColumns = Field(
        default_factory=list, description="Columns the query must return"
    )

    @model_validator(mode="after")
    def _distinct_columns(self) -> Chart:
        check_distinct(self.expected_columns, "expected column")
        return self


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


def query_fields(model: BaseModel) -> dict[str, object]:
    """The query fields a change sets (as given), without the others."""
    return {name: getattr(model, name) for name in model.model_fields_set if name in QUERY_FIELDS}


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
    datasource: ChartDatasource | None = None
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


# dashboards
MAX_ID = 2_147_483_647
DashboardId = Annotated[
    int, Field(ge=1, le=MAX_ID, description="The dashboard's numeric id, e.g. 42")
]
RefName = Annotated[
    str, StringConstraints(strip_whitespace=True, pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$")
]
BranchName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9._/-]{0,63}$")]


class SearchDashboardsArgs(BaseModel):
    query: str | None = Field(
        default=None, max_length=200, description="Words to look for in titles, tags, descriptions"
    )
    status: Literal["ok", "warning", "failing"] | None = Field(
        default=None, description="Only dashboards whose latest validation has this status"
    )


class DashboardArgs(BaseModel):
    dashboard_id: DashboardId


class CreateBranchArgs(BaseModel):
    dashboard_id: DashboardId
    name: BranchName = Field(
        description="New branch name: starts with a letter; letters, digits, . _ / - (not 'main')"
    )


class CommitChangesArgs(BaseModel):
    branch_id: int = Field(
        ge=1, le=MAX_ID, description="The branch's numeric id (from create_branch)"
    )
    message: str = Field(min_length=1, max_length=500, description="Commit message")
    changes: list[Change] = Field(
        min_length=1,
        max_length=MAX_CHANGES,
        description="Chart edits applied in order: add, update or remove",
    )


class DeployDashboardArgs(BaseModel):
    dashboard_id: DashboardId
    ref: RefName = Field(description="What to deploy: 'main', a branch name or a version id")
    environment: Literal["staging", "production"]


# datasources
DatasourceName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"),
    Field(description="Datasource name, e.g. sample"),
]


class ListTablesArgs(BaseModel):
    datasource: DatasourceName | None = Field(
        default=None, description="Datasource name; omit to list every datasource"
    )


class TableSchemaArgs(BaseModel):
    table_ref: str = Field(
        pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,63}\.[A-Za-z_][A-Za-z0-9_$.]{0,127}$",
        description="'datasource.table', e.g. sample.orders",
    )


class ExecuteSqlArgs(BaseModel):
    datasource: DatasourceName
    query: str = Field(
        min_length=1, max_length=20_000, description="Exactly one read-only SELECT statement"
    )


class ExecuteMigrationArgs(BaseModel):
    datasource: DatasourceName
    migration_id: str = Field(
        pattern=r"^[0-9]{8}_[a-z0-9_]{1,100}$",
        description="The pending migration's id, YYYYMMDD_name, e.g. 20261101_inventory_snapshots",
    )


# storage, knowledge, logs
class ListFilesArgs(BaseModel):
    prefix: str | None = Field(
        default=None, max_length=1024, description="Only keys starting with this, e.g. reports/"
    )


class ReadFileArgs(BaseModel):
    key: str = Field(
        min_length=1, max_length=1024, description="The file's key as list_files shows it"
    )


class LookupKnowledgeArgs(BaseModel):
    query: str = Field(
        min_length=1, max_length=500, description="What to look up, in the user's words"
    )


class QueryLogsArgs(BaseModel):
    query: str | None = Field(
        default=None,
        max_length=200,
        description='Words to search for; "exact phrase", or, -excluded work',
    )
    level: Literal["debug", "info", "warning", "error"] | None = Field(
        default=None, description="Minimum severity: warning returns warnings and errors"
    )
    since: datetime | None = Field(
        default=None, description="ISO 8601 start, e.g. 2026-11-29T08:00:00Z"
    )
    until: datetime | None = Field(default=None, description="ISO 8601 end")
    dashboard_id: int | None = Field(
        default=None, ge=1, le=2_147_483_647, description="Only this dashboard's"
    )

    @field_validator("since", "until")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        """A time without a zone is read as UTC."""
        return value.replace(tzinfo=UTC) if value and value.tzinfo is None else value

    @model_validator(mode="after")
    def _ordered(self) -> QueryLogsArgs:
        if self.since and self.until and self.since > self.until:
            raise ValueError("since must not be after until")
        return self
