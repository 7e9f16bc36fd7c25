"""Branches and commits: each commit applies chart edits to the branch head and creates a new
immutable version; a merge fast-forwards main to the branch head."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.codes import Code
from backend.config import Settings
from backend.dashboards import service, sources
from backend.dashboards.definition import AddChart, Change, EditError, UpdateChart
from backend.dashboards.models import Branch, Dashboard, DashboardVersion
from backend.dashboards.schemas import (
    BranchRead,
    CommitCreate,
    CommitRead,
    CommitSummary,
    MergeRead,
    VersionRead,
)
from backend.db import utcnow
from backend.errors import Conflict, NotFound, Unprocessable
from backend.principal import Principal


async def get(*, session: AsyncSession, branch_id: int, lock: bool = False) -> Branch:
    query = select(Branch).where(Branch.id == branch_id)
    branch = await session.scalar(query.with_for_update() if lock else query)
    if branch is None:
        raise NotFound(f"Branch {branch_id} not found", details={"branch_id": branch_id})
    await sources.check_visible(session, branch.dashboard_id)  # person mode: what Superset hides
    return branch


async def _parents(session: AsyncSession, dashboard_id: int) -> dict[int, int | None]:
    rows = await session.execute(
        select(DashboardVersion.id, DashboardVersion.parent_version_id).where(
            DashboardVersion.dashboard_id == dashboard_id
        )
    )
    return {version_id: parent for version_id, parent in rows.tuples()}


def _lineage(parents: dict[int, int | None], head: int, stop: int | None = None) -> list[int]:
    """Version ids from `head` back through its parents, ending before `stop`."""
    chain: list[int] = []
    current: int | None = head
    while current is not None and current != stop:
        chain.append(current)
        current = parents.get(current)
    return chain


async def read(*, session: AsyncSession, branch_id: int) -> BranchRead:
    """The branch with its head definition and its own commits, newest first."""
    branch = await get(session=session, branch_id=branch_id)
    head = await session.get(DashboardVersion, branch.head_version_id)
    assert head is not None
    chain = _lineage(await _parents(session, branch.dashboard_id), head.id, branch.base_version_id)
    versions = await session.scalars(select(DashboardVersion).where(DashboardVersion.id.in_(chain)))
    commits = sorted(versions, key=lambda v: chain.index(v.id))
    return BranchRead(
        id=branch.id,
        dashboard_id=branch.dashboard_id,
        name=branch.name,
        base_version_id=branch.base_version_id,
        head_version_id=branch.head_version_id,
        created_by=branch.created_by,
        created_at=branch.created_at,
        updated_at=branch.updated_at,
        definition=head.definition,
        commits=[CommitSummary.model_validate(v) for v in commits],
    )


async def create(
    *, session: AsyncSession, actor: Principal, dashboard_id: int, name: str
) -> BranchRead:
    """A new branch whose head is main's current version; a taken name is BRANCH_EXISTS."""
    dashboard = await service.get(session=session, dashboard_id=dashboard_id)
    main = await service.main_version(session=session, dashboard=dashboard)
    taken = Conflict(
        f"Dashboard {dashboard_id} already has a branch named {name!r}",
        code=Code.BRANCH_EXISTS,
        details={"dashboard_id": dashboard_id, "name": name},
    )
    if await session.scalar(
        select(Branch.id).where(Branch.dashboard_id == dashboard_id, Branch.name == name)
    ):
        raise taken
    branch = Branch(
        dashboard_id=dashboard_id,
        name=name,
        base_version_id=main.id,
        head_version_id=main.id,
        created_by=actor.username,
    )
    session.add(branch)
    try:
        await session.flush()
    except IntegrityError as exc:  # a concurrent request took the name first
        await session.rollback()
        raise taken from exc
    audit.record(
        session=session,
        actor=actor,
        action="dashboard.branch_create",
        resource_type="dashboard",
        resource_id=str(dashboard_id),
        details={"branch_id": branch.id, "name": name, "base_version_id": main.id},
    )
    await session.commit()
    return await read(session=session, branch_id=branch.id)


def _invalid(message: str, errors: list[dict[str, Any]]) -> Unprocessable:
    return Unprocessable(message, code=Code.INVALID_DEFINITION, details={"errors": errors})


async def commit(
    *,
    session: AsyncSession,
    settings: Settings,
    actor: Principal,
    branch_id: int,
    data: CommitCreate,
) -> CommitRead:
    """Apply `data.changes` to the branch head as a new version and move the head to it."""
    branch = await get(session=session, branch_id=branch_id, lock=True)
    head = await session.get(DashboardVersion, branch.head_version_id)
    assert head is not None
    try:
        definition = await sources.of(head.definition).commit(
            settings=settings, definition=head.definition, changes=data.changes
        )
    except EditError as exc:
        raise _invalid(exc.message, [{"change": exc.change, "msg": exc.message}]) from exc
    if definition == head.definition:
        raise Unprocessable("The changes leave the definition as it is", code=Code.NO_CHANGES)
    version = DashboardVersion(
        dashboard_id=branch.dashboard_id,
        parent_version_id=head.id,
        definition=definition,
        author=actor.username,
        message=data.message,
    )
    session.add(version)
    await session.flush()
    branch.head_version_id = version.id
    branch.updated_at = utcnow()
    audit.record(
        session=session,
        actor=actor,
        action="dashboard.commit",
        resource_type="dashboard",
        resource_id=str(branch.dashboard_id),
        details={
            "branch_id": branch.id,
            "version_id": version.id,
            "parent_version_id": head.id,
            "changes": [_describe(c) for c in data.changes],
        },
    )
    await session.commit()
    return CommitRead(branch_id=branch.id, version=VersionRead.model_validate(version))


def _describe(change: Change) -> str:
    if isinstance(change, AddChart):
        return f"add {getattr(change.chart, 'key', None) or change.chart.title}"
    if isinstance(change, UpdateChart):
        return f"update {change.key}: {', '.join(sorted(change.chart.model_fields_set))}"
    return f"remove {change.key}"


async def merge(*, session: AsyncSession, actor: Principal, branch_id: int) -> MergeRead:
    """Fast-forward main to the branch head; refused when main has moved past the branch."""
    branch = await get(session=session, branch_id=branch_id, lock=True)
    dashboard = await session.scalar(
        select(Dashboard).where(Dashboard.id == branch.dashboard_id).with_for_update()
    )
    assert dashboard is not None
    if dashboard.main_version_id == branch.head_version_id:
        raise Conflict("main already points at the branch head", code=Code.NOTHING_TO_MERGE)
    lineage = _lineage(await _parents(session, dashboard.id), branch.head_version_id)
    if dashboard.main_version_id not in lineage:
        raise Conflict(
            "main has moved since the branch started: not a fast-forward",
            code=Code.NOT_FAST_FORWARD,
            details={"main_version_id": dashboard.main_version_id},
        )
    previous = dashboard.main_version_id
    dashboard.main_version_id = branch.head_version_id
    dashboard.updated_at = utcnow()
    audit.record(
        session=session,
        actor=actor,
        action="dashboard.merge",
        resource_type="dashboard",
        resource_id=str(dashboard.id),
        details={"branch_id": branch.id, "from": previous, "to": branch.head_version_id},
    )
    await session.commit()
    return MergeRead(
        dashboard_id=dashboard.id, branch_id=branch.id, main_version_id=branch.head_version_id
    )
