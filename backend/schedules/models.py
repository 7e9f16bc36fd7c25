"""Schedules, their runs (one per firing) and each run's deliveries."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, utcnow


class Schedule(Base):
    __tablename__ = "schedules"
    __table_args__ = (Index("ix_schedules_due", "next_run_at", postgresql_where="enabled"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    owner_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    cron: Mapped[str | None] = mapped_column(String(120), default=None)
    every_s: Mapped[int | None] = mapped_column(default=None)
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    prompt: Mapped[str | None] = mapped_column(Text, default=None)
    workflow: Mapped[str | None] = mapped_column(String(200), default=None)
    sweep: Mapped[dict[str, Any] | None] = mapped_column(JSONB, default=None)
    mode: Mapped[str] = mapped_column(String(16), default="dynamic")
    notify: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    enabled: Mapped[bool] = mapped_column(default=True)
    conversation_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("agent_conversations.id", ondelete="SET NULL"), default=None
    )
    next_run_at: Mapped[datetime | None] = mapped_column(default=None)
    # A sweep's failing dashboards at its previous run: {"<id>": "<title>"} (what changed is
    # measured against it).
    sweep_state: Mapped[dict[str, Any] | None] = mapped_column(JSONB, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class ScheduleRun(Base):
    """One firing. `due_at` is the due time it stands for (null for "run now"): unique per
    schedule, so a due time can be claimed once."""

    __tablename__ = "schedule_runs"
    __table_args__ = (
        UniqueConstraint("schedule_id", "due_at", name="uq_schedule_runs_schedule_id_due_at"),
        Index("ix_schedule_runs_schedule_started", "schedule_id", "started_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    schedule_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("schedules.id", ondelete="CASCADE"))
    due_at: Mapped[datetime | None] = mapped_column(default=None)
    trigger: Mapped[str] = mapped_column(String(16))  # due | catch_up | manual
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)
    status: Mapped[str] = mapped_column(String(24), default="running")
    message_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSONB, default=None)
    # the procrastinate job executing it (a job whose worker died: the run was interrupted)
    job_id: Mapped[int | None] = mapped_column(BigInteger, default=None)


class ScheduleDelivery(Base):
    __tablename__ = "schedule_deliveries"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    run_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("schedule_runs.id", ondelete="CASCADE"), index=True
    )
    channel: Mapped[str] = mapped_column(String(16))  # email | webhook
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(default=0)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
