"""The audit trail: one row per write, login and agent decision."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Identity, Index, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, utcnow


class AuditEvent(Base):
    __tablename__ = "assistant_audit"
    __table_args__ = (
        Index("ix_assistant_audit_created_at", "created_at"),
        Index("ix_assistant_audit_actor_created", "actor_user_id", "created_at"),
        Index("ix_assistant_audit_resource", "resource_type", "resource_id"),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    actor_user_id: Mapped[uuid.UUID | None] = mapped_column()
    actor_username: Mapped[str | None] = mapped_column(String(64))
    service_client_id: Mapped[str | None] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(64))
    resource_type: Mapped[str | None] = mapped_column(String(64))
    resource_id: Mapped[str | None] = mapped_column(String(128))
    outcome: Mapped[str] = mapped_column(String(16), default="success")
    request_id: Mapped[str | None] = mapped_column(String(64))
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
