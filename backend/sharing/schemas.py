"""Sharing and export bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

ExportFormat = Literal["md", "json"]


class ShareRead(BaseModel):
    share_id: str
    url: str = Field(description="The shared page's path on this site")
    created_at: datetime


class SharedMessage(BaseModel):
    role: str
    content: str
    metadata: dict[str, Any]


class SharedConversation(BaseModel):
    title: str
    shared_at: datetime
    owner: str = Field(description="The user name of the person who shared it")
    messages: list[SharedMessage]


class ExportedMessage(BaseModel):
    id: int
    role: str
    content: str
    metadata: dict[str, Any]
    created_at: datetime


class ConversationExport(BaseModel):
    """`format=json`: the conversation's rows as they are stored."""

    title: str
    created_at: datetime
    messages: list[ExportedMessage]
