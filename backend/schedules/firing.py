"""One firing: run the schedule's work as its owner through the agent, record how it ended,
then queue its deliveries (a sweep's only when something changed)."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from backend.codes import Code
from backend.config import Settings
from backend.db import utcnow
from backend.identity.models import User
from backend.schedules import agent_turn, credential, deliveries, metrics, sweep
from backend.schedules.models import Schedule, ScheduleRun

log = logging.getLogger("backend.schedules")


@dataclass(frozen=True)
class Ended:
    """What a firing produced: its status, answer row, error and whether to notify."""

    status: str
    message_id: int | None = None
    error: dict[str, str] | None = None
    notify: bool = True
    text: str = ""
    sweep_state: dict[str, Any] | None = None
    delivery_ids: list[int] = field(default_factory=list)


async def claim(session: AsyncSession, run_id: uuid.UUID, job_id: int) -> bool:
    """Bind the run to this job; False when another job has it (it runs once)."""
    claimed = await session.execute(
        update(ScheduleRun)
        .where(
            ScheduleRun.id == run_id,
            ScheduleRun.status == "running",
            ScheduleRun.job_id.is_(None),
        )
        .values(job_id=job_id)
        .returning(ScheduleRun.id)
    )
    found = claimed.first() is not None
    await session.commit()
    return found


async def execute(
    *,
    factory: async_sessionmaker[AsyncSession],
    settings: Settings,
    run_id: uuid.UUID,
    job_id: int,
) -> Ended | None:
    """Run one claimed firing to its end and record it; None when it was not this job's."""
    async with factory() as session:
        if not await claim(session, run_id, job_id):
            return None
        run = await session.get(ScheduleRun, run_id)
        schedule = await session.get(Schedule, run.schedule_id) if run else None
        owner = await session.get(User, schedule.owner_id) if schedule else None
    if run is None or schedule is None:
        return None
    if owner is None or not owner.is_active:
        ended = Ended("failed", error={"code": Code.OWNER_INACTIVE, "message": "Owner inactive"})
    else:
        token = credential.issue(
            settings, owner_id=owner.id, roles=list(owner.roles), run_id=run_id
        )
        ended = await _work(settings, schedule, token, factory)
    ended = replace(ended, delivery_ids=await record(factory, run_id, ended))
    if ended.sweep_state is not None:
        await _keep_sweep_state(factory, schedule.id, ended.sweep_state)
    metrics.FIRINGS.labels(kind=kind_of(schedule), status=ended.status).inc()
    return ended


def kind_of(schedule: Schedule) -> str:
    if schedule.sweep is not None:
        return "sweep"
    return "workflow" if schedule.workflow is not None else "prompt"


async def _work(
    settings: Settings,
    schedule: Schedule,
    token: str,
    factory: async_sessionmaker[AsyncSession],
) -> Ended:
    if schedule.sweep is not None:
        return await sweep.run(settings=settings, schedule=schedule, token=token, factory=factory)
    if schedule.workflow is not None:
        text = f"Run the workflow {schedule.workflow}"
        options: dict[str, Any] = {"mode": "yaml", "workflow": schedule.workflow}
    else:
        text, options = schedule.prompt or "", {"mode": schedule.mode}
    try:
        turn = await agent_turn.run_turn(
            agent_url=settings.schedules.agent_url,
            token=token,
            conversation_id=str(schedule.conversation_id),
            text=text,
            options=options,
            timeout_s=settings.schedules.run_deadline_s,
        )
    except agent_turn.AgentUnavailable as exc:
        log.warning("schedule %s: the agent did not answer (%s)", schedule.id, exc)
        error = {"code": Code.AGENT_UNAVAILABLE, "message": "The agent could not be reached"}
        return Ended("failed", error=error)
    return Ended(turn.status, turn.message_id, turn.error, text=turn.text)


async def _keep_sweep_state(
    factory: async_sessionmaker[AsyncSession], schedule_id: uuid.UUID, state: dict[str, Any]
) -> None:
    async with factory() as session:
        await session.execute(
            update(Schedule).where(Schedule.id == schedule_id).values(sweep_state=state)
        )
        await session.commit()


async def record(
    factory: async_sessionmaker[AsyncSession], run_id: uuid.UUID, ended: Ended
) -> list[int]:
    """Write the run's end and, in the same transaction, its pending deliveries (so a run
    seen ended already lists them); their ids."""
    async with factory() as session:
        await session.execute(
            update(ScheduleRun)
            .where(ScheduleRun.id == run_id)
            .values(
                status=ended.status,
                message_id=ended.message_id,
                error=ended.error,
                finished_at=utcnow(),
            )
        )
        found = await deliveries.create(session, run_id) if ended.notify else []
        await session.commit()
        return found
