"""Conversation request and response bodies."""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from backend.feedback.schemas import FeedbackState
from backend.usage.schemas import LeaseUsage, UsageTokens

MAX_METADATA_BYTES = 1_000_000


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


class ConversationDetail(ConversationRead):
    usage: UsageTokens = Field(description="The tokens of this conversation's model calls")


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


class HistoryItem(MessageRead):
    feedback: FeedbackState | None = Field(
        default=None, description="The owner's rating of an assistant answer (null if none)"
    )


class HistoryPage(BaseModel):
    items: list[HistoryItem]
    has_more: bool = Field(description="True when older messages exist: pass before=items[0].id")


class LeaseRequest(BaseModel):
    holder: str = Field(min_length=1, max_length=128)
    ttl_s: float = Field(default=15, gt=0, le=300)
    run_id: str | None = Field(default=None, max_length=64)
    # where the holder serves the live run to other replicas (http(s) only)
    owner_url: str | None = Field(default=None, max_length=512, pattern=r"^https?://")
    # the holder of a live lease whose process the agent found dead (its owner_url answers
    # with another process, or not at all): the lease is taken from it before its TTL ends
    take_over: str | None = Field(default=None, min_length=1, max_length=128)


class LeaseThread(BaseModel):
    """The conversation as a run that just took its lease finds it (PUT only)."""

    has_history: bool  # history rows exist: a thread without a checkpoint recalls them
    workflow_waiting: bool  # an execution waits for a confirmation: a new message supersedes it


class LeaseRead(BaseModel):
    conversation_id: uuid.UUID
    holder: str
    expires_at: datetime
    run_id: str | None = None
    owner_url: str | None = None
    acquired_at: datetime | None = None
    expired: bool = False  # GET only: the holder stopped renewing (its process died)
    # PUT only: the user's tokens today and daily budget (the agent's budget check)
    usage: LeaseUsage | None = None
    thread: LeaseThread | None = None  # PUT only


class RunEnd(BaseModel):
    """A run's end in one request (agent service): the turn's history row, its debug record,
    the run's model calls and the lease's release. Every part is optional and stands alone:
    one refused is named in `errors` and the others are stored (a stored part is never undone
    by a later one), so a bad debug record never costs the answer or keeps the lease."""

    holder: str | None = Field(
        default=None, min_length=1, max_length=128, description="Release the lease it holds"
    )
    message: dict[str, Any] | None = Field(
        default=None, description="The turn's history row (a message append's body)"
    )
    debug: dict[str, Any] | None = Field(
        default=None, description="That row's debug record (`PUT /api/debug/{id}`'s body)"
    )
    usage: list[dict[str, Any]] = Field(
        default_factory=list,
        max_length=500,
        description="The run's model calls (`POST /api/agent/usage`'s `calls`)",
    )


class PartError(BaseModel):
    code: str
    message: str


class RunEndRead(BaseModel):
    message_id: int | None = None  # the stored row (also when it was stored before: resent)
    released: bool | None = None  # None when no holder was given
    recorded: int = 0  # model calls newly counted
    errors: dict[str, PartError] = Field(default_factory=dict)  # part -> why it was refused


class ActiveRead(BaseModel):
    active: bool
    run_id: str | None = None  # the live run, when active
    started_at: datetime | None = None
