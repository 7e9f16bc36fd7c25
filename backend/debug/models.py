"""One debug record per assistant history row: the model calls of that turn."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Identity
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, utcnow


class DebugRecord(Base):
    """The calls of the turn stored in `message_id`; deleted with that message."""

    __tablename__ = "debug_records"

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    message_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("agent_messages.id", ondelete="CASCADE"), unique=True
    )
    calls: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, default=list)
    dropped_calls: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
