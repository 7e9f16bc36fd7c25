"""Audit read models."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict


class AuditRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    created_at: datetime
    actor_user_id: uuid.UUID | None
    actor_username: str | None
    service_client_id: str | None
    action: str
    resource_type: str | None
    resource_id: str | None
    outcome: str
    request_id: str | None
    details: dict[str, Any]


class AuditPage(BaseModel):
    items: list[AuditRead]
    total: int
