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


class ChartPatch(BaseModel):
    """The fields to change on an existing chart; at least one."""

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
    chart: Chart


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
