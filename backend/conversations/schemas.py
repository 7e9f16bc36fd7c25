"""Conversation request and response bodies."""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_METADATA_BYTES = 1_000_000
PREFIX = "/api/assistant/conversations"  # where the browser's conversation routes live


class ConversationCreate(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True)

    title: str | None = Field(default=None, max_length=200)


class ConversationUpdate(BaseModel):
    # Stripped before the length check, so a blank title is refused rather than stored empty.
    model_config = ConfigDict(str_strip_whitespace=True)

    title: str = Field(min_length=1, max_length=200)


class ConversationRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    title: str
    created_at: datetime
    updated_at: datetime
    message_count: int
    is_archived: bool


class ConversationListItem(ConversationRead):
    snippet: str | None = Field(
        default=None,
        description="Only with q: plain text around the matches of the newest matching "
        "message (null when only the title matched)",
    )


class ConversationPage(BaseModel):
    items: list[ConversationListItem]
    total: int


class MessageCreate(BaseModel):
    role: Literal["user", "assistant", "system", "tool"]
    content: str = Field(max_length=200_000)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("metadata")
    @classmethod
    def _bounded(cls, value: dict[str, Any]) -> dict[str, Any]:
        if len(json.dumps(value, default=str)) > MAX_METADATA_BYTES:
            raise ValueError(f"metadata exceeds {MAX_METADATA_BYTES} bytes")
        return value


class MessageRead(BaseModel):
    id: int
    role: str
    content: str
    metadata: dict[str, Any]
    created_at: datetime
