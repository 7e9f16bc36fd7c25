"""datasources logic: listing, read-only queries, and applying shipped migrations."""

from __future__ import annotations

import asyncio

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.config import Settings
from backend.datasources import engines, migrations
from backend.datasources.engines import Datasource
from backend.datasources.migrations import Migration, MigrationFailed
from backend.datasources.models import AppliedMigration
from backend.datasources.readonly import QueryResult, execute_readonly
from backend.datasources.schemas import MigrationRead
from backend.errors import Conflict
from backend.oplogs import service as oplogs
from backend.principal import Principal

LOG_SOURCE = "datasources"


def list_(*, settings: Settings) -> list[Datasource]:
    """Every configured datasource, by name."""
    return engines.all_(settings)


MAX_AUDITED_SQL = 2000


async def run_query(
    *,
    settings: Settings,
    datasource: str,
    sql: str,
    limit: int | None,
    session: AsyncSession | None = None,
    actor: Principal | None = None,
) -> QueryResult:
    """Run read-only SQL (guarded, capped); see `readonly.execute_readonly`. Within an agent
    run (`actor.run_id`) the attempt is audited, refusals included."""
    run = execute_readonly(settings=settings, datasource=datasource, sql=sql, limit=limit)
    if session is None:
        return await run
    async with audit.run_read(
        session=session,
        actor=actor,
        action="datasource.query",
        resource_type="datasource",
        resource_id=datasource,
        details={"sql": sql[:MAX_AUDITED_SQL]},
    ):
        return await run


def _read(migration: Migration, applied: AppliedMigration | None) -> MigrationRead:
    return MigrationRead(
        id=migration.id,
        datasource=migration.datasource,
        description=migration.description,
        checksum=migration.checksum,
        status="applied" if applied else "pending",
        applied_by=applied.applied_by if applied else None,
        applied_at=applied.applied_at if applied else None,
    )


async def list_migrations(
    *, session: AsyncSession, settings: Settings, datasource: str
) -> list[MigrationRead]:
    """Shipped migrations of a datasource with their status, oldest first."""
    source = engines.get(settings, datasource)
    rows = await session.scalars(
        select(AppliedMigration).where(AppliedMigration.datasource == source.name)
    )
    applied = {row.migration_id: row for row in rows}
    return [_read(m, applied.get(m.id)) for m in migrations.discover(source.name)]


async def apply_migration(
    *,
    session: AsyncSession,
    settings: Settings,
    actor: Principal,
    datasource: str,
    migration_id: str,
) -> MigrationRead:
    """Apply one shipped migration in a transaction on the datasource; a second apply is 409."""
    source = engines.get(settings, datasource)
    migration = migrations.find(source.name, migration_id)
    record = await _claim(session=session, actor=actor, migration=migration)
    try:
        await asyncio.to_thread(migrations.run, settings, source, migration)
    except MigrationFailed as exc:
        await session.rollback()  # releases the claim: nothing is recorded as applied
        _trail(session=session, actor=actor, migration=migration, error=exc.message)
        await session.commit()
        raise
    _trail(session=session, actor=actor, migration=migration, error=None)
    await session.commit()
    return _read(migration, record)


async def _claim(
    *, session: AsyncSession, actor: Principal, migration: Migration
) -> AppliedMigration:
    """Insert the applied row first: a concurrent apply waits on the unique key, then gets 409."""
    conflict = Conflict(
        f"Migration '{migration.id}' is already applied to datasource '{migration.datasource}'",
        details={"datasource": migration.datasource, "migration_id": migration.id},
    )
    existing = await session.scalar(
        select(AppliedMigration.id).where(
            AppliedMigration.datasource == migration.datasource,
            AppliedMigration.migration_id == migration.id,
        )
    )
    if existing is not None:
        raise conflict
    record = AppliedMigration(
        datasource=migration.datasource,
        migration_id=migration.id,
        checksum=migration.checksum,
        applied_by=actor.username,
        applied_by_user_id=actor.user_id,
    )
    session.add(record)
    try:
        await session.flush()
    except IntegrityError as exc:
        await session.rollback()
        raise conflict from exc
    return record


def _trail(
    *, session: AsyncSession, actor: Principal, migration: Migration, error: str | None
) -> None:
    """The audit row and the operational log entry of one apply attempt."""
    details = {"datasource": migration.datasource, "migration_id": migration.id}
    audit.record(
        session=session,
        actor=actor,
        action="datasource.migration.apply",
        resource_type="datasource_migration",
        resource_id=f"{migration.datasource}/{migration.id}",
        outcome="failure" if error else "success",
        details={**details, "error": error} if error else details,
    )
    what = f"Migration {migration.id} on datasource {migration.datasource}"
    oplogs.write(
        session=session,
        level="error" if error else "info",
        source=LOG_SOURCE,
        message=f"{what} failed: {error}" if error else f"{what} applied by {actor.username}",
        details={**details, "actor": actor.username},
    )
