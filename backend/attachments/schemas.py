"""Attachment request and response bodies."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_EXTRACTED_CHARS = 500_000
MAX_BATCH = 20

ContentType = Literal[
    "application/pdf",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "text/csv",
    "application/json",
    "image/png",
    "image/jpeg",
]


class AttachmentCreate(BaseModel):
    name: str = Field(min_length=1, max_length=255)
    content_type: ContentType
    size: int = Field(ge=0, description="bytes of the original file")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    extracted_text: str | None = Field(default=None, max_length=MAX_EXTRACTED_CHARS)
    truncated: bool = Field(default=False, description="the extracted text is not the whole file")


class AttachmentBatch(BaseModel):
    """One message's files, recorded together (all or none)."""

    message_id: int | None = Field(
        default=None, ge=1, description="the user message they came with"
    )
    items: list[AttachmentCreate] = Field(min_length=1, max_length=MAX_BATCH)


class AttachmentRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    conversation_id: uuid.UUID
    message_id: int | None
    name: str
    content_type: str
    size: int
    sha256: str
    truncated: bool
    created_at: datetime


class AttachmentDetail(AttachmentRead):
    extracted_text: str | None


class AttachmentPage(BaseModel):
    items: list[AttachmentRead]
    total: int
