"""Bodies of the agent's tool-call audit records."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

MAX_ARGUMENT_CHARS = 4000


class ToolCallRecord(BaseModel):
    tool: str = Field(min_length=1, max_length=100)
    call_id: str = Field(min_length=1, max_length=64)
    outcome: Literal["success", "failure"]
    code: str | None = Field(default=None, max_length=64)
    arguments: dict[str, Any] = Field(default_factory=dict)
    duration_ms: int | None = Field(default=None, ge=0)

    @field_validator("arguments")
    @classmethod
    def _bounded(cls, value: dict[str, Any]) -> dict[str, Any]:
        if len(json.dumps(value, default=str)) > MAX_ARGUMENT_CHARS:
            return {"truncated": True}
        return value
