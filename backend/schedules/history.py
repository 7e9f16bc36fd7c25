"""A schedule's runs, newest first, each with its deliveries."""

from __future__ import annotations

import uuid
from collections import defaultdict

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.schedules.models import ScheduleDelivery, ScheduleRun
from backend.schedules.schemas import ScheduleDeliveryRead, ScheduleRunPage, ScheduleRunRead

MAX_RUNS = 100


async def page(*, session: AsyncSession, schedule_id: uuid.UUID) -> ScheduleRunPage:
    rows = list(
        await session.scalars(
            select(ScheduleRun)
            .where(ScheduleRun.schedule_id == schedule_id)
            .order_by(ScheduleRun.started_at.desc(), ScheduleRun.id)
            .limit(MAX_RUNS)
        )
    )
    deliveries: dict[uuid.UUID, list[ScheduleDeliveryRead]] = defaultdict(list)
    if rows:
        found = await session.scalars(
            select(ScheduleDelivery)
            .where(ScheduleDelivery.run_id.in_([r.id for r in rows]))
            .order_by(ScheduleDelivery.id)
        )
        for d in found:
            deliveries[d.run_id].append(
                ScheduleDeliveryRead(channel=d.channel, status=d.status, attempts=d.attempts)
            )
    return ScheduleRunPage(
        items=[
            ScheduleRunRead(
                run_id=r.id,
                started_at=r.started_at,
                finished_at=r.finished_at,
                status=r.status,
                message_id=r.message_id,
                error=r.error,
                deliveries=deliveries[r.id],
            )
            for r in rows
        ]
    )
