"""The schema of a workflow file (`workflows/*.yaml`): the one source of truth.

The backend validates every file with it at start-up and serves the result at
`GET /api/workflow/definitions`; the agent runs what that route returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from backend.workflows import templates
from common.tools import ARGUMENT_NAMES, TOOL_NAMES

# The agent's tools and their arguments, from the catalogue both processes share (CONTRACT.md,
# "Tools": names and arguments are fixed).
TOOL_ARGUMENTS: Mapping[str, frozenset[str]] = ARGUMENT_NAMES
ToolName = Literal[TOOL_NAMES]  # type: ignore[valid-type]
MAX_STEPS = 20
MAX_TEMPLATE_CHARS = 20_000

Name = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
StepName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,39}$")]
Template = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEMPLATE_CHARS)]
Keyword = Annotated[str, StringConstraints(strip_whitespace=True, min_length=2, max_length=100)]
Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]


class ToolCallStep(BaseModel):
    """Call one of the agent's tools; string parameters are templates."""

    model_config = ConfigDict(extra="forbid")

    name: StepName
    type: Literal["tool_call"]
    title: Title | None = None
    tool: ToolName
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_arguments(self) -> ToolCallStep:
        unknown = set(self.params) - TOOL_ARGUMENTS[self.tool]
        if unknown:
            allowed = ", ".join(sorted(TOOL_ARGUMENTS[self.tool])) or "none"
            raise ValueError(
                f"{self.tool} has no argument(s) {', '.join(sorted(unknown))} (it takes {allowed})"
            )
        return self

    def templates(self) -> dict[str, str]:
        """Every template of the step, by its place (`params.x`)."""
        return {f"params.{k}": v for k, v in _strings(self.params, "").items()}


class LlmCallStep(BaseModel):
    """One streamed model call with a templated prompt (and optional system prompt)."""

    model_config = ConfigDict(extra="forbid")

    name: StepName
    type: Literal["llm_call"]
    title: Title | None = None
    prompt: Template
    system: Template | None = None

    def templates(self) -> dict[str, str]:
        found = {"prompt": self.prompt}
        if self.system is not None:
            found["system"] = self.system
        return found


Step = Annotated[ToolCallStep | LlmCallStep, Field(discriminator="type")]


class WorkflowDefinition(BaseModel):
    """One predefined workflow: matched by keywords (or named), its steps run in order."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    description: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)] = Field(
        max_length=500
    )
    trigger_keywords: list[Keyword] = Field(min_length=1, max_length=50)
    steps: list[Step] = Field(min_length=1, max_length=MAX_STEPS)
    final_answer: Template

    @model_validator(mode="after")
    def _steps_and_templates(self) -> WorkflowDefinition:
        seen: set[str] = set()
        for index, step in enumerate(self.steps):
            if step.name in seen:
                raise ValueError(f"steps.{index}.name: {step.name!r} is used by an earlier step")
            for place, source in step.templates().items():
                _check(source, f"steps.{index}.{place}", frozenset(seen))
            seen.add(step.name)
        _check(self.final_answer, "final_answer", frozenset(seen))
        return self


def _check(source: str, place: str, earlier: frozenset[str]) -> None:
    try:
        templates.check(source, earlier_steps=earlier)
    except ValueError as exc:
        raise ValueError(f"{place}: {exc}") from exc


def _strings(value: Any, path: str) -> dict[str, str]:
    """The string leaves of a parameter value, by dotted path."""
    if isinstance(value, str):
        return {path: value}
    if isinstance(value, dict):
        found: dict[str, str] = {}
        for key, item in value.items():
            found.update(_strings(item, f"{path}.{key}" if path else str(key)))
        return found
    if isinstance(value, list):
        found = {}
        for i, item in enumerate(value):
            found.update(_strings(item, f"{path}.{i}"))
        return found
    return {}
