"""A shared conversation: a read-only snapshot of its history, one per conversation."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, utcnow


class Share(Base):
    """The snapshot behind `share_id`; sharing again replaces it, revoking deletes the row."""

    __tablename__ = "conversation_shares"

    share_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    conversation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("agent_conversations.id", ondelete="CASCADE"), unique=True
    )
    title: Mapped[str] = mapped_column(String(200))
    messages: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    shared_at: Mapped[datetime] = mapped_column(default=utcnow)
