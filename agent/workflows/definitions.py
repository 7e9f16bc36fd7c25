"""The workflows as `GET /api/workflow/definitions` returns them.

The backend owns the files' schema (backend/workflows/definition.py) and validates them at
start-up; this is the agent's typed reading of that route's answer (a test pins the two).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agent.backend_client import BackendClient
from agent.context import Context


class ToolStep(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    type: Literal["tool_call"]
    title: str | None = None
    tool: str
    params: dict[str, Any] = Field(default_factory=dict)


class LlmStep(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    type: Literal["llm_call"]
    title: str | None = None
    prompt: str
    system: str | None = None


Step = Annotated[ToolStep | LlmStep, Field(discriminator="type")]


class Definition(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    trigger_keywords: tuple[str, ...]
    steps: tuple[Step, ...]
    final_answer: str


_LIST = TypeAdapter(list[Definition])


async def fetch(client: BackendClient, context: Context) -> list[Definition]:
    """Every defined workflow, read as the user."""
    body = await client.call(context, "GET", "/api/workflow/definitions")
    return _LIST.validate_python(body.get("items", []))
