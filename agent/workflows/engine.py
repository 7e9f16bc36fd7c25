"""Running a workflow's steps in order: render, call the tool or the model, record, stream.

A step that fails (a template error, a refused tool call, a model error) stops the workflow
with that step's error. A step calling a tool that needs confirmation pauses the workflow
before anything runs: `Paused` carries the call, the execution row keeps it (so a restart
loses nothing), and a decision resumes from that step (`run(start=..., approved=call_id)`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessageChunk, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from agent.context import Context
from agent.errors import AgentError, Code
from agent.hitl import Pending
from agent.middleware import llm_failure
from agent.prompts import WORKFLOW_STEP_ID_PREFIX, WORKFLOW_STEP_SYSTEM
from agent.tools.calls import InvalidArguments, check_arguments, run_tool
from agent.tools.names import CONFIRM_TOOLS, describe_call
from agent.workflows.definitions import Definition, LlmStep, ToolStep
from agent.workflows.records import Records, now
from agent.workflows.templates import Renderer, TemplateFailure
from agent.workflows.timeline import Timeline, bounded


class StepFailure(AgentError):
    """Why a step failed: a stable code and a message that is safe to show."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code=code)

    def error(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class Completed:
    final_answer: str


@dataclass(frozen=True)
class Failed:
    step_index: int | None  # None: the final answer's template
    step_name: str
    error: dict[str, str]


@dataclass(frozen=True)
class Paused:
    step_index: int
    pending: Pending


ExecutionOutcome = Completed | Failed | Paused


@dataclass
class StepServices:
    """What steps run with: the same tools and model as the agent, and the run's Context."""

    tools: Mapping[str, BaseTool]
    model: BaseChatModel | None
    context: Context
    records: Records
    config: RunnableConfig
    # raises when the run may not go on (its lease lost, the conversation archived): called
    # before every step, as the dynamic run checks between its stream events
    check: Callable[[], None] = lambda: None


class Execution:
    """One execution of `definition`; `outputs` holds the results of the steps done so far."""

    def __init__(
        self,
        *,
        definition: Definition,
        execution_id: int,
        services: StepServices,
        timeline: Timeline,
        template_context: dict[str, Any],
        extra_prompt: str = "",
    ) -> None:
        self.definition = definition
        self.execution_id = execution_id
        self.services = services
        self.timeline = timeline
        self.outputs: dict[str, Any] = dict(template_context.get("steps", {}))
        self.renderer = Renderer({**template_context, "steps": self.outputs})
        self.extra_prompt = extra_prompt  # selected resources, for llm_call steps
        self.current: tuple[int, Any] | None = None  # the step under way, if any

    async def run(self, *, start: int = 0, approved: Pending | None = None) -> ExecutionOutcome:
        """Run the steps from `start`; `approved` is the confirmed call of step `start`."""
        for index in range(start, len(self.definition.steps)):
            step = self.definition.steps[index]
            ok = approved if index == start else None
            self.services.check()
            self.current = (index, step)
            try:
                outcome = await self._step(index, step, ok)
            except StepFailure as exc:
                self.current = None
                await self._failed(index, step, exc)
                return Failed(index, step.name, exc.error())
            self.current = None
            if isinstance(outcome, Paused):
                return outcome
        self.services.check()
        try:
            final = self.renderer.text(self.definition.final_answer)
        except TemplateFailure as exc:
            return Failed(None, "final_answer", {"code": Code.TEMPLATE_ERROR, "message": str(exc)})
        return Completed(final)

    async def _step(self, index: int, step: Any, approved: Pending | None) -> Paused | None:
        started = now()
        if isinstance(step, ToolStep):
            # A confirmed call runs exactly as the person saw it on the card.
            args = (
                approved.args
                if approved
                else self._render(lambda: self.renderer.value(step.params))
            )
            tool = self._tool(step.tool)
            args = _checked(tool, args)
            self.timeline.running(index, step, args)
            await self._record(index, step, "running", input=args, started_at=started)
            if step.tool in CONFIRM_TOOLS and approved is None:
                pending = Pending(
                    interrupt_id="",
                    tool=step.tool,
                    call_id=f"call_wf_{uuid.uuid4().hex[:20]}",
                    args=args,
                    description=describe_call(step.tool, args, self.services.context.lang),
                )
                await self._record(index, step, "waiting", input=args, started_at=started)
                return Paused(index, pending)
            call_id = approved.call_id if approved else f"call_wf_{uuid.uuid4().hex[:20]}"
            output = await self._call_tool(tool, args, call_id)
            step_input: Any = args
        else:
            system = self._render(lambda: self.renderer.text(step.system or WORKFLOW_STEP_SYSTEM))
            prompt = self._render(lambda: self.renderer.text(step.prompt))
            step_input = {"system": system, "prompt": prompt}
            self.timeline.running(index, step, step_input)
            await self._record(index, step, "running", input=step_input, started_at=started)
            output = {"text": await self._call_model(index, step, system, prompt)}
        self.outputs[step.name] = output
        self.timeline.completed(index, step, output)
        await self._record(
            index,
            step,
            "completed",
            input=step_input,
            output=bounded(output),
            started_at=started,
            finished_at=now(),
        )
        return None

    @staticmethod
    def _render(render: Any) -> Any:
        try:
            return render()
        except TemplateFailure as exc:
            raise StepFailure(Code.TEMPLATE_ERROR, str(exc)) from exc

    def _tool(self, name: str) -> BaseTool:
        tool = self.services.tools.get(name)
        if tool is None:
            raise StepFailure(Code.UNKNOWN_TOOL, f"There is no tool named {name!r}.")
        return tool

    async def _call_tool(self, tool: BaseTool, args: dict[str, Any], call_id: str) -> Any:
        """Run the tool as the agent's ToolNode does: the run's Context injected, the same
        backend calls under the user's identity (RBAC decided there)."""
        try:
            return await run_tool(tool, args, self.services.context, call_id, self.services.config)
        except AgentError as exc:
            raise StepFailure(exc.code, exc.message) from exc

    async def _call_model(self, index: int, step: LlmStep, system: str, prompt: str) -> str:
        model = self.services.model
        if model is None:
            raise StepFailure(Code.LLM_ERROR, "No language model is configured.")
        text = f"{prompt}\n\n{self.extra_prompt}" if self.extra_prompt else prompt
        question = HumanMessage(content=text, id=f"{WORKFLOW_STEP_ID_PREFIX}{uuid.uuid4().hex}")
        messages = [SystemMessage(content=system), question]
        config: RunnableConfig = {
            **self.services.config,
            "run_name": f"workflow:{self.definition.name}:{step.name}",
            "metadata": {"workflow": self.definition.name, "step": step.name},
        }
        parts: list[str] = []
        try:
            async for chunk in model.astream(messages, config=config):
                if isinstance(chunk, AIMessageChunk) and chunk.text:
                    parts.append(chunk.text)
                    self.timeline.text(index, chunk.text)
        except openai.APIError as exc:
            failure = llm_failure(exc)
            raise StepFailure(failure.code, failure.message) from exc
        return "".join(parts)

    async def _record(self, index: int, step: Any, status: str, **fields: Any) -> None:
        await self.services.records.step(
            self.execution_id,
            index,
            step_type=step.type,
            step_name=step.name,
            status=status,
            **fields,
        )

    async def abandon(self, error: dict[str, str]) -> Failed:
        """The run was cut off from outside (deadline, cancel): the step under way fails with
        `error` on the timeline and in its row, rather than staying "running" forever."""
        current, self.current = self.current, None
        if current is None:
            return Failed(None, "final_answer", error)
        index, step = current
        self.timeline.failed(index, step, error)
        await self._record(index, step, "failed", error=error, finished_at=now())
        return Failed(index, step.name, error)

    async def _failed(self, index: int, step: Any, exc: StepFailure) -> None:
        self.timeline.failed(index, step, exc.error())
        await self._record(index, step, "failed", error=exc.error(), finished_at=now())


def _checked(tool: BaseTool, args: Any) -> dict[str, Any]:
    """The rendered arguments, checked against the tool's schema before anything runs (and
    before anyone is asked to confirm a call that could not run)."""
    try:
        return check_arguments(tool, args)
    except InvalidArguments as exc:
        raise StepFailure(exc.code, exc.message) from exc
