"""Usage rows: one per model call (the ledger) and the rollups kept in the same transaction.

Reads never scan the ledger: `usage_daily` (user, day, model) answers a user's today and last
days and the admin views; `usage_conversations` answers a conversation's total. A call's
`idempotency_key` is unique, so a write retried after a dropped connection counts once.
"""

from __future__ import annotations

import uuid
from datetime import date, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    ForeignKey,
    Identity,
    Index,
    Integer,
    String,
)
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, utcnow

SOURCES = ("reported", "estimated")


class UsageCall(Base):
    """One model call: what the model reported, or an estimate when it reported nothing."""

    __tablename__ = "usage_calls"
    __table_args__ = (
        CheckConstraint("source IN ('reported', 'estimated')", name="source"),
        CheckConstraint("input_tokens >= 0 AND output_tokens >= 0", name="tokens"),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    idempotency_key: Mapped[str] = mapped_column(String(200), unique=True)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    conversation_id: Mapped[uuid.UUID | None] = mapped_column()  # none for an evaluation
    run_id: Mapped[str | None] = mapped_column(String(64))
    mode: Mapped[str] = mapped_column(String(16))
    model: Mapped[str] = mapped_column(String(200))
    input_tokens: Mapped[int] = mapped_column(Integer)
    output_tokens: Mapped[int] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String(16))
    evaluation: Mapped[bool] = mapped_column(Boolean, default=False)
    day: Mapped[date] = mapped_column(Date)  # UTC
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class UsageDaily(Base):
    """The sums of one user's calls to one model on one UTC day."""

    __tablename__ = "usage_daily"
    __table_args__ = (Index("ix_usage_daily_day", "day"),)

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    model: Mapped[str] = mapped_column(String(200), primary_key=True)
    input_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    output_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    model_calls: Mapped[int] = mapped_column(BigInteger, default=0)
    estimated_calls: Mapped[int] = mapped_column(BigInteger, default=0)


class UsageConversation(Base):
    """The sums of one conversation's calls."""

    __tablename__ = "usage_conversations"
    __table_args__ = (Index("ix_usage_conversations_user_id", "user_id"),)

    conversation_id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    input_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    output_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    model_calls: Mapped[int] = mapped_column(BigInteger, default=0)


class UsageBudget(Base):
    """A user's daily token budget (no row: no budget)."""

    __tablename__ = "usage_budgets"
    __table_args__ = (CheckConstraint("daily_tokens >= 0", name="daily_tokens"),)

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    daily_tokens: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
