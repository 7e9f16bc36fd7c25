"""Operational log read models and the level vocabulary."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict


class Level(StrEnum):
    """Severity, in increasing order."""

    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"


class LogRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    created_at: datetime
    level: Level
    source: str
    message: str
    dashboard_id: int | None
    details: dict[str, Any]


class LogPage(BaseModel):
    items: list[LogRead]
    total: int
