"""Operational log entries: what the platform's own operations did (validation, deploys, SQL)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Computed,
    Identity,
    Index,
    Integer,
    String,
    Text,
)
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, utcnow

LEVELS = ("debug", "info", "warning", "error")

# Words as written ('simple': identifiers such as campaign_id stay intact) plus English stems
# (so "timeouts" finds "timeout"), plus every string value of `details` (chart, migration id...).
SEARCH_SQL = (
    "to_tsvector('simple'::regconfig, (((source)::text || ' '::text) || message)) "
    "|| to_tsvector('english'::regconfig, message) "
    "|| jsonb_to_tsvector('simple'::regconfig, details, '[\"string\"]'::jsonb)"
)


class OperationalLog(Base):
    __tablename__ = "operational_logs"
    __table_args__ = (
        CheckConstraint("level IN ('debug', 'info', 'warning', 'error')", name="level"),
        Index("ix_operational_logs_created_at", "created_at"),
        Index("ix_operational_logs_dashboard_created", "dashboard_id", "created_at"),
        Index("ix_operational_logs_search", "search", postgresql_using="gin"),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    level: Mapped[str] = mapped_column(String(16))
    source: Mapped[str] = mapped_column(String(32))
    message: Mapped[str] = mapped_column(Text)
    # No foreign key: dashboards live in another package and logs outlive what they mention.
    dashboard_id: Mapped[int | None] = mapped_column(Integer)
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    search: Mapped[Any] = mapped_column(
        TSVECTOR, Computed(SEARCH_SQL, persisted=True), deferred=True
    )
