"""Create, read, change, delete and run schedules (own ones; admins list all); audited."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.audit import service as audit
from backend.conversations.models import Conversation
from backend.db import utcnow
from backend.errors import NotFound
from backend.identity.models import User
from backend.principal import Principal
from backend.schedules import history
from backend.schedules.models import Schedule, ScheduleRun
from backend.schedules.rules import Rules, timing_of
from backend.schedules.schemas import (
    ScheduleCreate,
    SchedulePage,
    ScheduleRead,
    ScheduleRunPage,
    ScheduleRunStarted,
    ScheduleUpdate,
)

# Starts a run's job once its row is committed (backend/schedules/queue.py).
Launch = Callable[[uuid.UUID, uuid.UUID], Awaitable[None]]
MAX_LISTED = 500
TIMING_FIELDS = frozenset({"cron", "every_s", "timezone"})


def read(row: Schedule, owner: str | None = None) -> ScheduleRead:
    upcoming = timing_of(row).upcoming(utcnow(), 3) if row.enabled else []
    return ScheduleRead.model_validate(
        {
            **{k: getattr(row, k) for k in ScheduleRead.model_fields if hasattr(row, k)},
            "upcoming": upcoming,
            "owner": owner,
        }
    )


async def _own(session: AsyncSession, actor: Principal, schedule_id: uuid.UUID) -> Schedule:
    row = await session.get(Schedule, schedule_id, with_for_update=True)
    if row is None or row.owner_id != actor.user_id:
        raise NotFound("Schedule not found")
    return row


def _audit(session: AsyncSession, actor: Principal, action: str, row: Schedule) -> None:
    audit.record(
        session=session,
        actor=actor,
        action=f"schedule.{action}",
        resource_type="schedule",
        resource_id=str(row.id),
        details={"name": row.name},
    )


def _dump(data: ScheduleCreate | ScheduleUpdate, fields: set[str]) -> dict[str, Any]:
    dumped = data.model_dump(include=fields)
    if "sweep" in dumped and dumped["sweep"] is not None:
        dumped["sweep"] = dict(dumped["sweep"])
    return dumped


async def create(
    *, session: AsyncSession, actor: Principal, data: ScheduleCreate, rules: Rules
) -> ScheduleRead:
    """A new schedule of the actor with its own conversation (titled with its name)."""
    now = utcnow()
    row = Schedule(owner_id=actor.user_id, created_at=now, updated_at=now)
    for key, value in _dump(data, set(ScheduleCreate.model_fields)).items():
        setattr(row, key, value)
    rules.check(row)
    row.next_run_at = timing_of(row).next_after(now) if row.enabled else None
    conversation = Conversation(owner_id=actor.user_id, title=data.name)
    session.add(conversation)
    await session.flush()
    row.conversation_id = conversation.id
    session.add(row)
    await session.flush()
    _audit(session, actor, "create", row)
    await session.commit()
    return read(row)


async def list_own(*, session: AsyncSession, actor: Principal) -> SchedulePage:
    rows = await session.scalars(
        select(Schedule)
        .where(Schedule.owner_id == actor.user_id)
        .order_by(Schedule.created_at.desc())
        .limit(MAX_LISTED)
    )
    return SchedulePage(items=[read(row) for row in rows])


async def list_all(*, session: AsyncSession) -> SchedulePage:
    found = await session.execute(
        select(Schedule, User.username)
        .join(User, User.id == Schedule.owner_id)
        .order_by(Schedule.created_at.desc())
        .limit(MAX_LISTED)
    )
    return SchedulePage(items=[read(row, owner) for row, owner in found.all()])


async def get(*, session: AsyncSession, actor: Principal, schedule_id: uuid.UUID) -> ScheduleRead:
    return read(await _own(session, actor, schedule_id))


async def update(
    *,
    session: AsyncSession,
    actor: Principal,
    schedule_id: uuid.UUID,
    data: ScheduleUpdate,
    rules: Rules,
) -> ScheduleRead:
    """Apply the fields sent; timing changes and enabling start from now (no catch-up)."""
    row = await _own(session, actor, schedule_id)
    was_enabled = row.enabled
    sent = set(data.model_fields_set)
    for key, value in _dump(data, sent).items():
        if key in ("mode", "enabled", "timezone", "notify", "name") and value is None:
            continue  # these cannot be cleared
        setattr(row, key, value)
    rules.check(row)
    if not row.enabled:
        row.next_run_at = None
    elif not was_enabled or sent & TIMING_FIELDS:
        row.next_run_at = timing_of(row).next_after(utcnow())
    row.updated_at = utcnow()
    _audit(session, actor, "update", row)
    await session.commit()
    return read(row)


async def delete(*, session: AsyncSession, actor: Principal, schedule_id: uuid.UUID) -> None:
    """Remove it with its runs; its conversation stays (the answers are the person's)."""
    row = await _own(session, actor, schedule_id)
    _audit(session, actor, "delete", row)
    await session.delete(row)
    await session.commit()


async def run_now(
    *, session: AsyncSession, actor: Principal, schedule_id: uuid.UUID, launch: Launch
) -> ScheduleRunStarted:
    """One firing now, beside the schedule's own times."""
    row = await _own(session, actor, schedule_id)
    run = ScheduleRun(schedule_id=row.id, trigger="manual", status="running", started_at=utcnow())
    session.add(run)
    await session.flush()
    _audit(session, actor, "run", row)
    await session.commit()
    await launch(run.id, row.id)
    return ScheduleRunStarted(run_id=run.id)


async def runs(
    *, session: AsyncSession, actor: Principal, schedule_id: uuid.UUID
) -> ScheduleRunPage:
    row = await session.get(Schedule, schedule_id)
    if row is None or row.owner_id != actor.user_id:
        raise NotFound("Schedule not found")
    return await history.page(session=session, schedule_id=row.id)
