"""The dashboard definition schema and the chart edits (add / update / remove) a commit applies."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from backend.dashboards.chart_query import NewChart, QueryFields, query_fields

MAX_CHARTS = 30
MAX_SQL_CHARS = 20_000
MAX_CHANGES = 50

ChartKey = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")]
ChartType = Literal["line", "bar", "area", "pie", "table", "number"]
Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
DatasourceName = Annotated[str, StringConstraints(min_length=1, max_length=64)]
Sql = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_SQL_CHARS)
]
ColumnName = Annotated[str, StringConstraints(min_length=1, max_length=128)]
ExpectedColumns = Annotated[list[ColumnName], Field(max_length=50)]


def _unique(values: list[str], what: str) -> None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"duplicate {what}: {value}")
        seen.add(value)


class Chart(BaseModel):
    """One chart: the SQL it runs on a datasource and the columns it needs back."""

    model_config = ConfigDict(extra="forbid")

    key: ChartKey
    title: Title
    type: ChartType
    datasource: DatasourceName
    sql: Sql
    expected_columns: ExpectedColumns = Field(default_factory=list)

    @model_validator(mode="after")
    def _distinct_columns(self) -> Chart:
        _unique(self.expected_columns, "expected column")
        return self


class Definition(BaseModel):
    model_config = ConfigDict(extra="forbid")

    charts: Annotated[list[Chart], Field(max_length=MAX_CHARTS)]

    @model_validator(mode="after")
    def _distinct_keys(self) -> Definition:
        _unique([c.key for c in self.charts], "chart key")
        return self


class ChartPatch(QueryFields):
    """Fields to change on an existing chart; the key itself cannot change. `type`, `sql`,
    `datasource` and `expected_columns` are the built-in domain's; the query fields
    (`viz_type`, `metrics`, ...) a Superset chart's."""

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
    model_config = ConfigDict(extra="forbid")

    op: Literal["add"]
    chart: Chart | NewChart


class UpdateChart(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: Literal["update"]
    key: ChartKey
    chart: ChartPatch


class RemoveChart(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: Literal["remove"]
    key: ChartKey


Change = Annotated[AddChart | UpdateChart | RemoveChart, Field(discriminator="op")]
Changes = Annotated[list[Change], Field(min_length=1, max_length=MAX_CHANGES)]


class EditError(ValueError):
    """A change that does not apply to the definition; `change` is its index in the list."""

    def __init__(self, change: int, message: str) -> None:
        super().__init__(message)
        self.change = change
        self.message = message


def _index(charts: list[dict[str, Any]], key: str) -> int | None:
    return next((i for i, c in enumerate(charts) if c["key"] == key), None)


def apply_changes(definition: dict[str, Any], changes: list[Change]) -> dict[str, Any]:
    """Apply `changes` in order to a copy of `definition`; raise EditError on the first misfit."""
    charts = [dict(c) for c in definition.get("charts", [])]
    for i, change in enumerate(changes):
        if isinstance(change, AddChart) and not isinstance(change.chart, Chart):
            raise EditError(i, "a built-in chart is added with key, type, datasource and sql")
        if isinstance(change, UpdateChart) and query_fields(change.chart):
            raise EditError(
                i, f"a built-in chart has no {', '.join(sorted(query_fields(change.chart)))}"
            )
        if isinstance(change, AddChart):
            assert isinstance(change.chart, Chart)
            if _index(charts, change.chart.key) is not None:
                raise EditError(i, f"chart key already exists: {change.chart.key}")
            charts.append(change.chart.model_dump())
            continue
        at = _index(charts, change.key)
        if at is None:
            raise EditError(i, f"no chart with key: {change.key}")
        if isinstance(change, UpdateChart):
            charts[at] = {**charts[at], **change.chart.model_dump(exclude_unset=True)}
        else:
            del charts[at]
    if len(charts) > MAX_CHARTS:
        raise EditError(len(changes) - 1, f"a dashboard holds at most {MAX_CHARTS} charts")
    return {"charts": charts}
