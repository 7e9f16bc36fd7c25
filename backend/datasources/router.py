"""datasources routes: listing, schema, read-only SQL, and shipped migrations."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request

from backend.datasources import catalog, service
from backend.datasources.migrations import MIGRATION_ID
from backend.datasources.schemas import (
    ColumnList,
    ColumnRead,
    DatasourceList,
    DatasourceRead,
    MigrationList,
    MigrationRead,
    QueryRead,
    QueryRequest,
    TableList,
    TableRead,
)
from backend.deps import Admin, SessionDep, SettingsDep, Viewer
from backend.disconnect import unless_disconnected
from backend.errors import responses

router = APIRouter(prefix="/api/datasources", tags=["datasources"])

Name = Annotated[str, Path(description="The datasource's configured name")]
MigrationId = Annotated[
    str, Path(pattern=MIGRATION_ID.pattern, description="YYYYMMDD_name of a shipped SQL file")
]


@router.get("", response_model=DatasourceList, responses=responses(401, 403))
async def list_(principal: Viewer, settings: SettingsDep) -> DatasourceList:
    """Configured datasources: name, dialect and description (never the URL)."""
    items = [
        DatasourceRead(name=s.name, dialect=s.dialect, description=s.description)
        for s in service.list_(settings=settings)
    ]
    return DatasourceList(items=items)


@router.get("/{name}/tables", response_model=TableList, responses=responses(401, 403, 404, 503))
async def tables(name: Name, principal: Viewer, settings: SettingsDep) -> TableList:
    """Tables and views of the datasource."""
    found = await catalog.tables(settings=settings, datasource=name)
    return TableList(datasource=name, items=[TableRead(name=t.name, kind=t.kind) for t in found])


@router.get(
    "/{name}/tables/{table}/columns",
    response_model=ColumnList,
    responses=responses(401, 403, 404, 422, 503),
)
async def columns(name: Name, table: str, principal: Viewer, settings: SettingsDep) -> ColumnList:
    """Columns of one table; the name must be a plain identifier that exists."""
    found = await catalog.columns(settings=settings, datasource=name, table=table)
    items = [ColumnRead(**vars(c)) for c in found]
    return ColumnList(datasource=name, table=table, items=items)


@router.post(
    "/{name}/query", response_model=QueryRead, responses=responses(401, 403, 404, 422, 503)
)
async def query(
    name: Name,
    body: QueryRequest,
    principal: Viewer,
    settings: SettingsDep,
    session: SessionDep,
    request: Request,
) -> QueryRead:
    """Run one read-only SELECT with row, byte and time caps (refusals: SQL_REJECTED).

    A client that disconnects cancels the statement on the database (audited as CANCELLED)."""
    run = service.run_query(
        settings=settings,
        datasource=name,
        sql=body.sql,
        limit=body.limit,
        session=session,
        actor=principal,
    )
    result = await unless_disconnected(request, run)
    return QueryRead(**vars(result))


@router.get("/{name}/migrations", response_model=MigrationList, responses=responses(401, 403, 404))
async def migrations(
    name: Name, principal: Viewer, session: SessionDep, settings: SettingsDep
) -> MigrationList:
    """Schema migrations shipped for the datasource, with who applied them and when."""
    items = await service.list_migrations(session=session, settings=settings, datasource=name)
    return MigrationList(datasource=name, items=items)


@router.post(
    "/{name}/migrations/{migration_id}/apply",
    response_model=MigrationRead,
    responses=responses(401, 403, 404, 409, 422, 503),
)
async def apply(
    name: Name,
    migration_id: MigrationId,
    principal: Admin,
    session: SessionDep,
    settings: SettingsDep,
) -> MigrationRead:
    """Apply one pending migration in a transaction (admin); a second apply is 409."""
    return await service.apply_migration(
        session=session,
        settings=settings,
        actor=principal,
        datasource=name,
        migration_id=migration_id,
    )
