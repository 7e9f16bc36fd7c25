"""Which platform dashboard each Superset dashboard is (keyed by its UUID) and its integer id
in each environment's Superset (ids differ between instances; UUIDs do not)."""

from __future__ import annotations

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, Timestamped


class SupersetDashboard(Timestamped, Base):
    __tablename__ = "superset_dashboards"

    dashboard_id: Mapped[int] = mapped_column(
        ForeignKey("dashboards.id", ondelete="CASCADE"), primary_key=True
    )
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    staging_id: Mapped[int | None] = mapped_column(Integer)
    production_id: Mapped[int | None] = mapped_column(Integer)
    fingerprint: Mapped[str] = mapped_column(String(64), default="")
