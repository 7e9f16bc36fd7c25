"""Workflow request and response bodies."""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from backend.workflows.definition import Step

MAX_JSON_BYTES = 200_000  # per step input/output, per execution input
ExecutionStatus = Literal["running", "waiting", "completed", "failed", "cancelled"]
StepStatus = Literal["running", "waiting", "completed", "failed"]
StepType = Literal["tool_call", "llm_call"]


def _bounded(value: Any) -> Any:
    if len(json.dumps(value, default=str)) > MAX_JSON_BYTES:
        raise ValueError(f"larger than {MAX_JSON_BYTES} bytes of JSON")
    return value


Bounded = Annotated[Any, AfterValidator(_bounded)]


class DefinitionRead(BaseModel):
    name: str
    description: str
    trigger_keywords: list[str]
    steps: list[Step]
    final_answer: str = Field(description="The template of the answer (an addition to CONTRACT)")


class DefinitionList(BaseModel):
    items: list[DefinitionRead]


class StepError(BaseModel):
    code: str = Field(max_length=64)
    message: str = Field(max_length=2000)


class ExecutionCreate(BaseModel):
    conversation_id: uuid.UUID
    workflow_name: str = Field(min_length=1, max_length=64)
    mode: Literal["yaml"] = "yaml"
    input: Annotated[dict[str, Any], AfterValidator(_bounded)] = Field(
        default_factory=dict, description="The request: text, resources"
    )


class StepWrite(BaseModel):
    step_type: StepType
    step_name: str = Field(min_length=1, max_length=64)
    status: StepStatus
    input: Bounded = None
    output: Bounded = None
    error: StepError | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None


class ExecutionUpdate(BaseModel):
    status: ExecutionStatus
    expected_status: ExecutionStatus | None = Field(
        default=None, description="Refuse (409 EXECUTION_CONFLICT) unless the status is this"
    )
    final_answer: str | None = Field(default=None, max_length=200_000)
    message_id: int | None = Field(default=None, ge=1)
    pending: Annotated[dict[str, Any] | None, AfterValidator(_bounded)] = Field(
        default=None, description="The call waiting for confirmation (status waiting)"
    )
    error: StepError | None = None


class StepRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    step_index: int
    step_type: str
    step_name: str
    input: Any
    output: Any
    status: str
    error: dict[str, Any] | None
    started_at: datetime | None
    finished_at: datetime | None


class ExecutionRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    conversation_id: uuid.UUID
    message_id: int | None
    mode: str
    workflow_name: str
    status: str
    input: dict[str, Any]
    final_answer: str | None
    pending: dict[str, Any] | None
    error: dict[str, Any] | None
    started_at: datetime
    finished_at: datetime | None
    steps: list[StepRead]


class ExecutionPage(BaseModel):
    items: list[ExecutionRead]
