"""datasources tables: which shipped schema migrations have been applied, by whom and when."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, Identity, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, utcnow


class AppliedMigration(Base):
    __tablename__ = "datasource_migrations"
    # One row per (datasource, migration): the constraint is what makes a raced apply a 409.
    __table_args__ = (UniqueConstraint("datasource", "migration_id"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    datasource: Mapped[str] = mapped_column(String(64))
    migration_id: Mapped[str] = mapped_column(String(128))
    checksum: Mapped[str] = mapped_column(String(64))
    applied_by: Mapped[str] = mapped_column(String(64))
    applied_by_user_id: Mapped[uuid.UUID | None] = mapped_column()
    applied_at: Mapped[datetime] = mapped_column(default=utcnow)
