"""Workflow executions and their steps (status, input, output, error, timing)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Identity, Index, String, Text, UniqueConstraint, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column, relationship

from backend.db import Base, utcnow


class WorkflowExecution(Base):
    """One run of a workflow in a conversation. `pending` holds the step call that waits for a
    person's confirmation (status `waiting`), so a paused run survives a restart."""

    __tablename__ = "workflow_executions"
    __table_args__ = (
        Index(
            "ix_workflow_executions_conversation_started",
            "conversation_id",
            text("started_at DESC"),
            text("id DESC"),
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    conversation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("agent_conversations.id", ondelete="CASCADE")
    )
    message_id: Mapped[int | None] = mapped_column(
        BigInteger, ForeignKey("agent_messages.id", ondelete="SET NULL")
    )
    mode: Mapped[str] = mapped_column(String(16), default="yaml")
    workflow_name: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), default="running")
    input: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    final_answer: Mapped[str | None] = mapped_column(Text)
    pending: Mapped[dict[str, Any] | None] = mapped_column(JSONB(none_as_null=True))
    error: Mapped[dict[str, Any] | None] = mapped_column(JSONB(none_as_null=True))
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column()

    steps: Mapped[list[WorkflowStep]] = relationship(
        back_populates="execution",
        order_by="WorkflowStep.step_index",
        cascade="all, delete-orphan",
        lazy="selectin",
    )


class WorkflowStep(Base):
    __tablename__ = "workflow_steps"
    __table_args__ = (UniqueConstraint("execution_id", "step_index"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    execution_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("workflow_executions.id", ondelete="CASCADE")
    )
    step_index: Mapped[int] = mapped_column()
    step_type: Mapped[str] = mapped_column(String(16))
    step_name: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    # none_as_null: a missing input/output/error is SQL NULL, not JSON null
    input: Mapped[Any] = mapped_column(JSONB(none_as_null=True), nullable=True)
    output: Mapped[Any] = mapped_column(JSONB(none_as_null=True), nullable=True)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSONB(none_as_null=True))
    started_at: Mapped[datetime | None] = mapped_column()
    finished_at: Mapped[datetime | None] = mapped_column()

    execution: Mapped[WorkflowExecution] = relationship(back_populates="steps")
