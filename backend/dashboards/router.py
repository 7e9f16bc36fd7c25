"""Dashboard routes: search, read, validate, health, chart data, branches, commits, merge,
deployments."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Query, status

from backend.dashboards import branches, chart_data, deployments, search, service, validation
from backend.dashboards.schemas import (
    BranchCreate,
    BranchRead,
    BranchSummary,
    ChartDataRead,
    CommitCreate,
    CommitRead,
    DashboardPage,
    DashboardRead,
    DeploymentCreate,
    DeploymentPage,
    DeploymentResult,
    Environment,
    HealthRead,
    MergeRead,
    Ref,
    RunRead,
    Status,
    ValidateRequest,
    VersionRead,
)
from backend.deps import Admin, Editor, Page, SessionDep, SettingsDep, Viewer
from backend.errors import responses

router = APIRouter(tags=["dashboards"])
PREFIX = "/api/dashboards"
ONE = PREFIX + "/{dashboard_id}"
READ_ERRORS = responses(401, 403, 404, 422)
WRITE_ERRORS = responses(401, 403, 404, 409, 422)
Id = Annotated[int, Path(ge=1, le=2_147_483_647)]


@router.get(PREFIX, response_model=DashboardPage, responses=responses(401, 403, 422))
async def search_dashboards(
    principal: Viewer,
    session: SessionDep,
    settings: SettingsDep,
    page: Page,
    query: Annotated[
        str | None, Query(max_length=200, description="Words in title, tags, description")
    ] = None,
    status_: Annotated[
        Status | None, Query(alias="status", description="Latest validation")
    ] = None,
    tag: Annotated[str | None, Query(max_length=64, description="Exact tag")] = None,
    environment: Annotated[
        Environment | None,
        Query(description="Judge status by the version this environment serves (default: main)"),
    ] = None,
) -> DashboardPage:
    """Full-text search; `status` filters by the latest validation of main (or `environment`)."""
    return await search.search(
        session=session,
        query=query,
        status=status_,
        tag=tag,
        environment=environment,
        limit=page.limit,
        offset=page.offset,
        settings=settings,
    )


@router.get(ONE, response_model=DashboardRead, responses=READ_ERRORS)
async def get_dashboard(
    dashboard_id: Id,
    principal: Viewer,
    session: SessionDep,
    settings: SettingsDep,
    ref: Annotated[Ref | None, Query(description="Also show this branch or version")] = None,
) -> DashboardRead:
    """The dashboard with main's definition, branches, environments and latest validation;
    `source` says where a dashboard synced from Superset lives; `?ref=` adds `version`."""
    return await service.read(
        session=session, dashboard_id=dashboard_id, settings=settings, ref=ref
    )


@router.get(ONE + "/versions/{version_id}", response_model=VersionRead, responses=READ_ERRORS)
async def get_version(
    dashboard_id: Id, version_id: Id, principal: Viewer, session: SessionDep
) -> VersionRead:
    """One immutable version of the definition."""
    version = await service.get_version(
        session=session, dashboard_id=dashboard_id, version_id=version_id
    )
    return VersionRead.model_validate(version)


@router.post(ONE + "/validate", response_model=RunRead, responses=READ_ERRORS)
async def validate_dashboard(
    dashboard_id: Id,
    principal: Viewer,
    session: SessionDep,
    settings: SettingsDep,
    body: Annotated[ValidateRequest | None, Body()] = None,
) -> RunRead:
    """Run every chart's SQL read-only and store the run (viewers may: it changes no data)."""
    request = body or ValidateRequest()
    return await validation.validate(
        session=session,
        settings=settings,
        actor=principal,
        dashboard_id=dashboard_id,
        ref=request.ref,
        environment=request.environment,
    )


@router.get(ONE + "/health", response_model=HealthRead, responses=READ_ERRORS)
async def dashboard_health(
    dashboard_id: Id,
    principal: Viewer,
    session: SessionDep,
    settings: SettingsDep,
    environment: Annotated[Environment | None, Query(description="Default: main")] = None,
) -> HealthRead:
    """The latest validation (with per-chart results) and the last 10 runs. A Superset
    dashboard's charts are run through that environment's Superset first (503
    SUPERSET_UNAVAILABLE when it does not answer)."""
    return await validation.health(
        session=session,
        settings=settings,
        actor=principal,
        dashboard_id=dashboard_id,
        environment=environment,
    )


@router.get(
    ONE + "/charts/{chart_key}/data",
    response_model=ChartDataRead,
    responses=responses(401, 403, 404, 422, 503),
)
async def chart_rows(
    dashboard_id: Id,
    chart_key: Annotated[str, Path(min_length=1, max_length=64)],
    principal: Viewer,
    session: SessionDep,
    settings: SettingsDep,
    environment: Annotated[Environment | None, Query(description="Default: main")] = None,
    ref: Annotated[
        Ref | None, Query(description="A branch or version: its chart, run on staging")
    ] = None,
) -> ChartDataRead:
    """Run one chart's SQL read-only (the /query caps) and return its rows. A chart that cannot
    be drawn is its query's error (422 SQL_ERROR, SQL_TIMEOUT, SQL_REJECTED; 503 when the
    datasource is unreachable) or 422 CHART_INVALID (unknown datasource, missing columns)."""
    return await chart_data.read(
        session=session,
        settings=settings,
        dashboard_id=dashboard_id,
        chart_key=chart_key,
        environment=environment,
        ref=ref,
    )


@router.get(ONE + "/branches", response_model=list[BranchSummary], responses=READ_ERRORS)
async def list_branches(
    dashboard_id: Id, principal: Viewer, session: SessionDep
) -> list[BranchSummary]:
    """The dashboard's branches."""
    return (await service.read(session=session, dashboard_id=dashboard_id)).branches


@router.post(
    ONE + "/branches",
    response_model=BranchRead,
    status_code=status.HTTP_201_CREATED,
    responses=WRITE_ERRORS,
)
async def create_branch(
    dashboard_id: Id, body: BranchCreate, principal: Editor, session: SessionDep
) -> BranchRead:
    """Start a branch at main's current version (editor)."""
    return await branches.create(
        session=session, actor=principal, dashboard_id=dashboard_id, name=body.name
    )


@router.get("/api/branches/{branch_id}", response_model=BranchRead, responses=READ_ERRORS)
async def get_branch(branch_id: Id, principal: Viewer, session: SessionDep) -> BranchRead:
    """The branch, its head definition and its commits."""
    return await branches.read(session=session, branch_id=branch_id)


@router.post(
    "/api/branches/{branch_id}/commits",
    response_model=CommitRead,
    status_code=status.HTTP_201_CREATED,
    responses=responses(401, 403, 404, 422),
)
async def commit_changes(
    branch_id: Id,
    body: CommitCreate,
    principal: Editor,
    session: SessionDep,
    settings: SettingsDep,
) -> CommitRead:
    """Apply chart edits (add / update / remove) as a new version on the branch (editor)."""
    return await branches.commit(
        session=session, settings=settings, actor=principal, branch_id=branch_id, data=body
    )


@router.post("/api/branches/{branch_id}/merge", response_model=MergeRead, responses=WRITE_ERRORS)
async def merge_branch(branch_id: Id, principal: Editor, session: SessionDep) -> MergeRead:
    """Fast-forward main to the branch head (editor)."""
    return await branches.merge(session=session, actor=principal, branch_id=branch_id)


@router.post(
    ONE + "/deployments",
    response_model=DeploymentResult,
    status_code=status.HTTP_201_CREATED,
    responses=WRITE_ERRORS,
)
async def deploy_dashboard(
    dashboard_id: Id,
    body: DeploymentCreate,
    principal: Admin,
    session: SessionDep,
    settings: SettingsDep,
) -> DeploymentResult:
    """Validate the ref's version and deploy it; failing is 409 VALIDATION_FAILED unless force."""
    return await deployments.deploy(
        session=session, settings=settings, actor=principal, dashboard_id=dashboard_id, data=body
    )


@router.get(ONE + "/deployments", response_model=DeploymentPage, responses=READ_ERRORS)
async def list_deployments(
    dashboard_id: Id,
    principal: Viewer,
    session: SessionDep,
    page: Page,
    environment: Environment | None = None,
) -> DeploymentPage:
    """Deployment history, newest first."""
    return await deployments.list_(
        session=session,
        dashboard_id=dashboard_id,
        environment=environment,
        limit=page.limit,
        offset=page.offset,
    )
