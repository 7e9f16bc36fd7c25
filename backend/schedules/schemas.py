"""Schedule bodies (CONTRACT.md "Schedules")."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

Mode = Literal["dynamic", "none", "yaml", "diagnose"]
RunStatus = Literal["running", "ok", "failed", "waiting_confirmation", "skipped"]
Channel = Literal["email", "webhook"]
DeliveryStatus = Literal["pending", "delivered", "failed"]
Address = Annotated[str, Field(pattern=r"^[^@\s<>,;\"]{1,64}@[^@\s<>,;\"]{1,255}$")]


class Sweep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    environment: Literal["production", "staging"]


class Notify(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: list[Address] = Field(default_factory=list, max_length=20)
    webhook: str | None = Field(default=None, max_length=2048)


class ScheduleCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    cron: str | None = Field(default=None, max_length=120)
    every_s: int | None = Field(default=None, ge=1, le=366 * 86400)
    timezone: str = Field(default="UTC", max_length=64)
    prompt: str | None = Field(default=None, min_length=1, max_length=20_000)
    workflow: str | None = Field(default=None, min_length=1, max_length=200)
    sweep: Sweep | None = None
    mode: Mode = "dynamic"
    notify: Notify = Field(default_factory=Notify)
    enabled: bool = True


class ScheduleUpdate(BaseModel):
    """Any field of the creation body; what is sent replaces what was (the rules are checked on
    the result: still exactly one of cron / every_s and of prompt / workflow / sweep)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, min_length=1, max_length=200)
    cron: str | None = Field(default=None, max_length=120)
    every_s: int | None = Field(default=None, ge=1, le=366 * 86400)
    timezone: str | None = Field(default=None, max_length=64)
    prompt: str | None = Field(default=None, min_length=1, max_length=20_000)
    workflow: str | None = Field(default=None, min_length=1, max_length=200)
    sweep: Sweep | None = None
    mode: Mode | None = None
    notify: Notify | None = None
    enabled: bool | None = None


class ScheduleRead(BaseModel):
    id: uuid.UUID
    name: str
    cron: str | None
    every_s: int | None
    timezone: str
    prompt: str | None
    workflow: str | None
    sweep: Sweep | None
    mode: Mode
    notify: Notify
    enabled: bool
    conversation_id: uuid.UUID | None
    next_run_at: datetime | None
    upcoming: list[datetime] = Field(description="The next three firings (empty when disabled)")
    created_at: datetime
    owner: str | None = Field(default=None, description="The owner's username (admin view)")


class SchedulePage(BaseModel):
    items: list[ScheduleRead]


class SchedulePreviewRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cron: str | None = Field(default=None, max_length=120)
    every_s: int | None = Field(default=None, ge=1, le=366 * 86400)
    timezone: str = Field(default="UTC", max_length=64)


class SchedulePreview(BaseModel):
    upcoming: list[datetime]


class ScheduleRunStarted(BaseModel):
    run_id: uuid.UUID


class ScheduleDeliveryRead(BaseModel):
    channel: Channel
    status: DeliveryStatus
    attempts: int


class ScheduleRunError(BaseModel):
    code: str
    message: str


class ScheduleRunRead(BaseModel):
    run_id: uuid.UUID
    started_at: datetime
    finished_at: datetime | None
    status: RunStatus
    message_id: int | None
    error: ScheduleRunError | None = None
    deliveries: list[ScheduleDeliveryRead]


class ScheduleRunPage(BaseModel):
    items: list[ScheduleRunRead]
