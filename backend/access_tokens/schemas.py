"""Personal access token bodies (CONTRACT.md, "Personal access tokens")."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Scope = Literal["read", "full"]


class AccessTokenCreate(BaseModel):
    name: str = Field(min_length=1, max_length=100)
    scope: Scope = "full"
    expires_in_days: int = Field(default=90, ge=1, le=365)


class AccessTokenRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    name: str
    scope: Scope
    prefix: str = Field(description="The token's first characters, to recognise it")
    created_at: datetime
    expires_at: datetime
    last_used_at: datetime | None


class AccessTokenCreated(BaseModel):
    id: uuid.UUID
    name: str
    scope: Scope
    prefix: str
    token: str = Field(description="The secret (starts with `acp_`): shown in this answer only")
    created_at: datetime
    expires_at: datetime


class AccessTokenPage(BaseModel):
    items: list[AccessTokenRead]
