"""A run's deliveries: one row per channel, each attempt a procrastinate job retried with
backoff until it is delivered or `1 + len(retry_delays_s)` attempts have failed. A delivery
never changes its run's status."""

from __future__ import annotations

import logging
import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from backend.config import Settings
from backend.conversations.models import Message
from backend.db import utcnow
from backend.schedules import metrics, senders
from backend.schedules.models import Schedule, ScheduleDelivery, ScheduleRun

log = logging.getLogger("backend.schedules")
MAX_TEXT = 3500  # characters of the answer in a notification (Slack shows ~4000)


class DeliveryFailed(Exception):
    """An attempt failed and another will follow (procrastinate retries the job)."""


async def create(session: AsyncSession, run_id: uuid.UUID) -> list[int]:
    """A pending delivery per channel the run's schedule names (flushed, not committed)."""
    run = await session.get(ScheduleRun, run_id)
    schedule = await session.get(Schedule, run.schedule_id) if run else None
    if schedule is None:
        return []
    notify = schedule.notify or {}
    channels = (["email"] if notify.get("email") else []) + (
        ["webhook"] if notify.get("webhook") else []
    )
    rows = [ScheduleDelivery(run_id=run_id, channel=c, status="pending") for c in channels]
    session.add_all(rows)
    await session.flush()
    return [row.id for row in rows]


async def attempt(
    factory: async_sessionmaker[AsyncSession], settings: Settings, delivery_id: int
) -> None:
    """One attempt; DeliveryFailed when it failed and attempts remain."""
    async with factory() as session:
        delivery = await session.get(ScheduleDelivery, delivery_id, with_for_update=True)
        if delivery is None or delivery.status != "pending":
            return
        run = await session.get(ScheduleRun, delivery.run_id)
        schedule = await session.get(Schedule, run.schedule_id) if run else None
        if run is None or schedule is None:
            return
        note = senders.Note(
            schedule_id=str(schedule.id),
            schedule_name=schedule.name,
            run_id=str(run.id),
            status=run.status,
            conversation_id=str(schedule.conversation_id) if schedule.conversation_id else None,
            message_id=run.message_id,
            answer=await _answer(session, run.message_id),
        )
        delivery.attempts += 1
        try:
            await senders.send(delivery.channel, note, schedule.notify or {}, settings)
        except senders.SendError as exc:
            await _failed(session, delivery, str(exc), settings)
            return
        delivery.status, delivery.last_error = "delivered", None
        metrics.DELIVERIES.labels(channel=delivery.channel, result="delivered").inc()
        await session.commit()


async def _failed(
    session: AsyncSession, delivery: ScheduleDelivery, reason: str, settings: Settings
) -> None:
    metrics.DELIVERIES.labels(channel=delivery.channel, result="failed").inc()
    delivery.last_error = reason[:500]
    delivery.updated_at = utcnow()
    final = delivery.attempts >= 1 + len(settings.schedules.retry_delays_s)
    if final:
        delivery.status = "failed"
    channel, attempts = delivery.channel, delivery.attempts
    await session.commit()
    log.warning(
        "schedule delivery %s (%s) attempt %d failed: %s", delivery.id, channel, attempts, reason
    )
    if not final:
        raise DeliveryFailed(reason)


async def _answer(session: AsyncSession, message_id: int | None) -> str:
    if message_id is None:
        return ""
    content = await session.scalar(select(Message.content).where(Message.id == message_id))
    text = (content or "").strip()
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"
