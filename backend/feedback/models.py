"""A person's rating of an assistant answer: one per answer, by its conversation's owner."""

from __future__ import annotations

import uuid

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, Timestamped


class Feedback(Timestamped, Base):
    __tablename__ = "message_feedback"
    __table_args__ = (
        CheckConstraint("rating IN ('up', 'down')", name="rating"),
        Index("ix_message_feedback_rating_created", "rating", "created_at"),
    )

    message_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("agent_messages.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    rating: Mapped[str] = mapped_column(String(4))
    comment: Mapped[str | None] = mapped_column(Text, default=None)
