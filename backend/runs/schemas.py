"""The run lease and the run's end: what the agent service sends and reads back."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from backend.usage.schemas import LeaseUsage


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
