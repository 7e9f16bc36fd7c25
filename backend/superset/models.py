"""Which platform dashboard each Superset dashboard is (keyed by its UUID) and its integer id
in each environment's Superset (ids differ between instances; UUIDs do not)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, Timestamped, utcnow


class SupersetDashboard(Timestamped, Base):
    __tablename__ = "superset_dashboards"

    dashboard_id: Mapped[int] = mapped_column(
        ForeignKey("dashboards.id", ondelete="CASCADE"), primary_key=True
    )
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    staging_id: Mapped[int | None] = mapped_column(Integer)
    production_id: Mapped[int | None] = mapped_column(Integer)
    fingerprint: Mapped[str] = mapped_column(String(64), default="")


class SupersetSession(Base):
    """A person's own session in one environment's Superset (`SUPERSET__IDENTITY=person`):
    Superset's refresh token, sealed (common/sealed.py); never a password."""

    __tablename__ = "superset_sessions"

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    environment: Mapped[str] = mapped_column(String(16), primary_key=True)
    username: Mapped[str] = mapped_column(String(255))
    provider: Mapped[str] = mapped_column(String(8))
    refresh_sealed: Mapped[str] = mapped_column(Text)
    signed_in_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
