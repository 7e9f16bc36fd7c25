"""Conversations, their messages, and the agent's per-conversation run lease."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    ColumnExpressionArgument,
    ForeignKey,
    Identity,
    Index,
    String,
    Text,
    UniqueConstraint,
    func,
    literal_column,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.sql.elements import TextClause

from backend.db import Base, Timestamped, utcnow

# Conversation search (title and message text). The `simple` configuration lowercases words but
# stems none: conversations mix Russian and English, and prefix matching ("дашборд" finds
# "дашборды", "revenue" finds "revenues") covers what stemming one language would. Queries must
# use this exact expression for the GIN indexes below to apply.
SEARCH_CONFIG: ColumnElement[str] = literal_column("'simple'::regconfig")


def search_vector(column: ColumnExpressionArgument[str] | TextClause) -> ColumnElement[object]:
    """The indexed full-text vector of a text column."""
    return func.to_tsvector(SEARCH_CONFIG, column)


class Conversation(Timestamped, Base):
    __tablename__ = "agent_conversations"
    __table_args__ = (
        Index(
            "ix_agent_conversations_owner_activity",
            "owner_id",
            "is_archived",
            text("updated_at DESC"),
            text("id DESC"),
        ),
        Index(
            "ix_agent_conversations_title_search",
            search_vector(text("title")),
            postgresql_using="gin",
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    owner_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(200), default="")
    message_count: Mapped[int] = mapped_column(default=0)
    is_archived: Mapped[bool] = mapped_column(default=False)


class Message(Base):
    __tablename__ = "agent_messages"
    __table_args__ = (
        Index("ix_agent_messages_conversation_id_id", "conversation_id", "id"),
        Index(
            "ix_agent_messages_content_search",
            search_vector(text("content")),
            postgresql_using="gin",
        ),
        # a write sent again after its answer was lost is stored once (NULLs never collide)
        UniqueConstraint(
            "conversation_id", "idempotency_key", name="uq_agent_messages_idempotency_key"
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    conversation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("agent_conversations.id", ondelete="CASCADE")
    )
    idempotency_key: Mapped[str | None] = mapped_column(String(64), default=None)
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text)
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSONB, default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class AgentRun(Base):
    """A lease: the agent process `holder` runs this conversation until `expires_at`."""

    __tablename__ = "agent_runs"

    conversation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("agent_conversations.id", ondelete="CASCADE"), primary_key=True
    )
    holder: Mapped[str] = mapped_column(String(128))
    # The run holding the lease and where its live turn is served (agent/runs/viewers.py).
    run_id: Mapped[str | None] = mapped_column(String(64), default=None)
    owner_url: Mapped[str | None] = mapped_column(String(512), default=None)
    acquired_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()
