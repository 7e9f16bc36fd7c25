"""Debug record bodies (CONTRACT.md, "Debug records and workflow executions")."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

MAX_CALLS = 50  # model calls kept per turn; the agent counts the rest in dropped_calls
MAX_RECORD_BYTES = 2_000_000  # JSON size of one record, as written by the agent


class CallRequest(BaseModel):
    model: str | None = Field(description="The model name sent to the provider")
    params: dict[str, Any] = Field(description="Invocation parameters (temperature, stream, ...)")
    messages: list[dict[str, Any]] = Field(
        description="Chat-completions messages as sent, system prompt and injected context included"
    )
    tools: list[dict[str, Any]] = Field(description="Tool definitions offered (empty: none)")
    omitted_messages: int = Field(default=0, ge=0, description="Earlier messages left out")


class CallResponse(BaseModel):
    content: Any = Field(description="The answer's text (or content blocks)")
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    error: dict[str, Any] | None = Field(default=None, description="{type, message} of a failure")


class CallTiming(BaseModel):
    start_time: datetime
    end_time: datetime | None
    duration_ms: int | None


class DebugCall(BaseModel):
    run_id: str | None = Field(default=None, description="The diagnosis run of this call")
    source: str | None = Field(default=None, description="Which part made it, e.g. workflow:x:y")
    request: CallRequest
    response: CallResponse
    timing: CallTiming


class DebugRecordWrite(BaseModel):
    calls: list[DebugCall] = Field(max_length=MAX_CALLS)
    dropped_calls: int = Field(default=0, ge=0, description="Calls past the bounds, not kept")
    _values: dict[str, Any] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _bounded(self) -> DebugRecordWrite:
        self._values = self.model_dump(mode="json")
        size = len(json.dumps(self._values).encode())
        if size > MAX_RECORD_BYTES:
            raise ValueError(f"the record is {size} bytes of JSON; at most {MAX_RECORD_BYTES}")
        return self

    def values(self) -> dict[str, Any]:
        """The columns to store: the JSON form the size check already made."""
        return self._values or self.model_dump(mode="json")


class DebugRecordStored(BaseModel):
    """What the agent's write is answered with: the record is not sent back (it can be 2 MB)."""

    message_id: int
    calls: int = Field(description="Model calls stored")
    dropped_calls: int
    created_at: datetime


class DebugRecordRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    message_id: int
    calls: list[DebugCall]
    dropped_calls: int
    created_at: datetime
