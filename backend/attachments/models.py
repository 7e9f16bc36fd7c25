"""Files attached to a conversation: what the agent read from them, linked to the user message."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, utcnow


class Attachment(Base):
    __tablename__ = "agent_attachments"
    __table_args__ = (
        Index("ix_agent_attachments_conversation_created", "conversation_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    conversation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("agent_conversations.id", ondelete="CASCADE")
    )
    message_id: Mapped[int | None] = mapped_column(
        BigInteger, ForeignKey("agent_messages.id", ondelete="SET NULL"), index=True
    )
    name: Mapped[str] = mapped_column(String(255))
    content_type: Mapped[str] = mapped_column(String(127))
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    # The text the agent extracted (bounded); the original bytes are not kept.
    extracted_text: Mapped[str | None] = mapped_column(Text)
    truncated: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
