"""Dashboard request and response bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
)

from backend.dashboards.definition import Changes

Environment = Literal["staging", "production"]
Status = Literal["ok", "warning", "failing"]
StatusOrUnknown = Literal["ok", "warning", "failing", "unknown"]
# `main`, a branch name, or a version id written as digits.
Ref = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=128)]


def _branch_name(value: str) -> str:
    if value.lower() == "main":
        raise ValueError("'main' is reserved")
    if "//" in value or ".." in value or value.endswith(("/", ".")):
        raise ValueError("must not contain '//' or '..' nor end with '/' or '.'")
    return value


BranchName = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9._/-]{0,63}$"),
    AfterValidator(_branch_name),
]


# --- requests -------------------------------------------------------------------------------


class BranchCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: BranchName = Field(description="Starts with a letter; letters, digits, . _ / -")


class CommitCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    message: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
    changes: Changes


class ValidateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ref: Ref | None = Field(default=None, description="main (default), a branch name or version id")
    environment: Environment | None = Field(
        default=None, description="Validate the version this environment serves instead of a ref"
    )


class DeploymentCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ref: Ref = Field(description="main, a branch name, or a version id")
    environment: Environment
    force: bool = Field(default=False, description="Deploy even when validation is failing")


# --- responses ------------------------------------------------------------------------------


class VersionRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    dashboard_id: int
    parent_version_id: int | None
    definition: dict[str, Any]
    author: str
    message: str
    created_at: datetime


class CommitSummary(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int = Field(description="The version id the commit created")
    parent_version_id: int | None
    author: str
    message: str
    created_at: datetime


class BranchSummary(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    base_version_id: int
    head_version_id: int
    created_by: str
    updated_at: datetime


class BranchRead(BranchSummary):
    dashboard_id: int
    created_at: datetime
    definition: dict[str, Any] = Field(description="The head version's definition")
    commits: list[CommitSummary] = Field(description="Commits made on the branch, newest first")


class CommitRead(BaseModel):
    branch_id: int
    version: VersionRead


class MergeRead(BaseModel):
    dashboard_id: int
    branch_id: int
    main_version_id: int


class ChartError(BaseModel):
    code: str
    message: str


class ChartResultRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    chart_key: str
    chart_title: str
    status: Status
    message: str
    elapsed_ms: float
    row_count: int | None
    error: ChartError | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="A Superset chart that failed: a code and Superset's message (else absent)",
    )


class RunSummary(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    dashboard_id: int
    version_id: int
    ref: str
    status: Status
    started_at: datetime
    elapsed_ms: float
    triggered_by: str


class RunRead(RunSummary):
    charts: list[ChartResultRead]


class EnvironmentRead(BaseModel):
    environment: Environment
    version_id: int
    deployment_id: int
    deployed_at: datetime
    deployed_by: str
    status: StatusOrUnknown = Field(description="Latest validation of the version it serves")
    last_validated_at: datetime | None
    is_main: bool = Field(description="True when it serves main's current version")


class Environments(BaseModel):
    staging: EnvironmentRead | None = None
    production: EnvironmentRead | None = None


class SupersetLink(BaseModel):
    id: int = Field(description="The dashboard's id in that environment's Superset")
    url: str = Field(description="The dashboard in that environment's Superset")


class SupersetSource(BaseModel):
    kind: Literal["superset"] = "superset"
    uuid: str
    environments: dict[Environment, SupersetLink | None]


class DashboardSummary(BaseModel):
    id: int
    title: str
    description: str
    tags: list[str]
    owner: str
    main_version_id: int | None
    status: StatusOrUnknown = Field(description="Latest validation of the target version")
    last_validated_at: datetime | None
    environments: Environments
    source: SupersetSource | None = Field(
        default=None,
        # Absent (not null) for the built-in domain's dashboards: their answers stay as they were.
        exclude_if=lambda value: value is None,
        description="Where a dashboard synced from Superset lives; absent for others",
    )


class DashboardPage(BaseModel):
    items: list[DashboardSummary]
    total: int


class DashboardRead(DashboardSummary):
    created_at: datetime
    updated_at: datetime
    main: VersionRead | None
    branches: list[BranchSummary]
    latest_validation: RunSummary | None = Field(description="Latest run of main's version")
    ref: str | None = Field(default=None, description="The ref asked for (`?ref=`), if any")
    version: VersionRead | None = Field(
        default=None,
        description="The version `?ref=` names (a branch name or version id); each chart of a "
        "Superset dashboard carries explore_url {environment: url} where it is deployed",
    )


class HealthRead(BaseModel):
    dashboard_id: int
    target: str = Field(description="'main' or the environment asked for")
    version_id: int | None
    status: StatusOrUnknown
    latest_run: RunRead | None
    history: list[RunSummary] = Field(description="The dashboard's last 10 runs, newest first")


class DeploymentRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    dashboard_id: int
    environment: Environment
    version_id: int
    ref: str
    forced: bool
    deployed_by: str
    deployed_at: datetime
    validation_run_id: int | None


class DeploymentResult(DeploymentRead):
    validation: RunRead | None


class DeploymentPage(BaseModel):
    items: list[DeploymentRead]
    total: int


class ChartDataRead(BaseModel):
    """One chart's rows, as its SQL returned them read-only (the /query caps apply)."""

    chart_key: str
    title: str
    type: str = Field(description="line, bar, area, pie, table or number")
    version_id: int = Field(description="The dashboard version whose chart was run")
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool = Field(description="True when the row or byte cap cut the result")
    elapsed_ms: float
    temporal: list[str] = Field(
        default_factory=list,
        description="The columns that hold points in time (Superset's `coltypes`: epoch "
        "milliseconds), drawn as dates",
    )
