"""Due schedules become runs: each due time claimed once (row lock + a unique due time per
schedule), missed ones folded by the grace rule; runs left without a job are found again, and
runs whose worker died are ended `RUN_INTERRUPTED`."""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from backend.codes import Code
from backend.config import Settings
from backend.db import utcnow
from backend.schedules import metrics, timing
from backend.schedules.models import Schedule, ScheduleDelivery, ScheduleRun
from backend.schedules.rules import timing_of

BATCH = 100
# a run committed without its job for this long (its process died in between) is queued again
UNLAUNCHED_AFTER = timedelta(seconds=30)
# a pending delivery untouched this long (past every retry delay) lost its job: queued again
STRANDED_AFTER = timedelta(minutes=5)
Launch = tuple[uuid.UUID, uuid.UUID]  # (run id, schedule id)


async def claim_due(factory: async_sessionmaker[AsyncSession], settings: Settings) -> list[Launch]:
    """Create the runs of every schedule due now; the ids of those to execute."""
    now = timing.now()
    launch: list[Launch] = []
    async with factory() as session:
        rows = await session.scalars(
            select(Schedule)
            .where(Schedule.enabled, Schedule.next_run_at <= now)
            .order_by(Schedule.next_run_at)
            .limit(BATCH)
            .with_for_update(skip_locked=True)
        )
        for row in rows:
            assert row.next_run_at is not None
            plan = timing.claim(
                timing_of(row),
                first_due=row.next_run_at,
                now=now,
                grace_s=settings.schedules.misfire_grace_s,
            )
            caught_up = plan.due_at != row.next_run_at or now - plan.due_at > UNLAUNCHED_AFTER
            run = ScheduleRun(
                schedule_id=row.id,
                due_at=plan.due_at,
                trigger="catch_up" if caught_up else "due",
                started_at=now,
                status="running" if plan.run else "skipped",
                finished_at=None if plan.run else now,
            )
            session.add(run)
            row.next_run_at = plan.next_run_at
            await session.flush()
            if plan.run:
                launch.append((run.id, row.id))
            else:
                metrics.FIRINGS.labels(kind="any", status="skipped").inc()
        await session.commit()
    return launch


async def unlaunched(factory: async_sessionmaker[AsyncSession]) -> list[Launch]:
    """Runs committed as running whose job never started (the launcher died in between)."""
    async with factory() as session:
        found = await session.execute(
            select(ScheduleRun.id, ScheduleRun.schedule_id).where(
                ScheduleRun.status == "running",
                ScheduleRun.job_id.is_(None),
                ScheduleRun.started_at < utcnow() - UNLAUNCHED_AFTER,
            )
        )
        return [(run_id, schedule_id) for run_id, schedule_id in found.all()]


async def stranded_deliveries(factory: async_sessionmaker[AsyncSession]) -> list[int]:
    """Pending deliveries nobody has tried for a while (their process died before queueing
    them, or while trying one)."""
    async with factory() as session:
        found = await session.scalars(
            select(ScheduleDelivery.id)
            .where(
                ScheduleDelivery.status == "pending",
                ScheduleDelivery.updated_at < utcnow() - STRANDED_AFTER,
            )
            .limit(BATCH)
        )
        return list(found)


async def interrupt(factory: async_sessionmaker[AsyncSession], job_id: int) -> None:
    """End the run a dead worker was executing."""
    async with factory() as session:
        await session.execute(
            update(ScheduleRun)
            .where(ScheduleRun.job_id == job_id, ScheduleRun.status == "running")
            .values(
                status="failed",
                finished_at=utcnow(),
                error={
                    "code": Code.RUN_INTERRUPTED,
                    "message": "The process running this firing stopped before it ended",
                },
            )
        )
        await session.commit()
