"""Feedback request and response bodies."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Rating = Literal["up", "down"]
MAX_COMMENT_CHARS = 2000


class FeedbackWrite(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rating: Rating
    comment: str | None = Field(default=None, max_length=MAX_COMMENT_CHARS)


class FeedbackRead(BaseModel):
    message_id: int
    rating: Rating
    comment: str | None
    updated_at: datetime


class FeedbackState(BaseModel):
    """What a history item shows of its rating."""

    rating: Rating
    comment: str | None


class FeedbackItem(BaseModel):
    message_id: int
    conversation_id: uuid.UUID
    username: str
    rating: Rating
    comment: str | None
    question: str | None = Field(description="The person's message this answer answered")
    answer: str
    tools: list[str] = Field(description="The tools the answer called, in order, each once")
    created_at: datetime


class FeedbackPage(BaseModel):
    items: list[FeedbackItem]
    total: int
