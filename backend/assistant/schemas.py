"""The browser's reads of a conversation that join other domains: its detail with the tokens
its model calls used, and its history with the owner's ratings."""

from __future__ import annotations

from pydantic import BaseModel, Field

from backend.conversations.schemas import ConversationRead, MessageRead
from backend.feedback.schemas import FeedbackState
from backend.usage.schemas import UsageTokens


class ConversationDetail(ConversationRead):
    usage: UsageTokens = Field(description="The tokens of this conversation's model calls")


class HistoryItem(MessageRead):
    feedback: FeedbackState | None = Field(
        default=None, description="The owner's rating of an assistant answer (null if none)"
    )


class HistoryPage(BaseModel):
    items: list[HistoryItem]
    has_more: bool = Field(description="True when older messages exist: pass before=items[0].id")
