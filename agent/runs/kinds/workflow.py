"""Mode `yaml`: a predefined workflow instead of the agent loop (CONTRACT.md, "Modes").

Routing (agent/runs/routing.py) picks this kind for a new message whose workflow it found
(`options.workflow`, else the keywords), and for a decision on a workflow step waiting for
confirmation; anything else is a dynamic run. The final answer (or the failure) is added to the
thread, so a following agent turn can refer to it.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from agent import hitl
from agent.backend_client import BackendError
from agent.errors import AgentError, Code, Unavailable
from agent.resources import PreparedResources
from agent.runs.question import attachments_of, new_message
from agent.runs.result import RunResult, ThreadWrite
from agent.runs.state import LEASE_LOST, Run
from agent.runs.supersede import NOT_RECORDED, Superseded
from agent.workflows import definitions, matcher
from agent.workflows.definitions import Definition
from agent.workflows.engine import (
    Completed,
    Execution,
    ExecutionOutcome,
    Failed,
    Paused,
    StepServices,
)
from agent.workflows.records import Records
from agent.workflows.timeline import Timeline

log = logging.getLogger(__name__)
STOPPED = {
    Code.CANCELLED: "The person stopped the workflow.",
    Code.USAGE_LIMIT: "The daily budget was used up.",
}


class WorkflowRun:
    """One workflow execution: a new one (`definition`), or a waiting one resumed by the
    person's decision (`waiting`, the backend's execution row)."""

    supersedes_at_once = True  # a waiting workflow is cancelled before this one might pause
    out_of_time = "This workflow ran out of time."

    def __init__(
        self, *, definition: Definition | None = None, waiting: dict[str, Any] | None = None
    ) -> None:
        self.definition = definition
        self.waiting = waiting
        self.superseded: Superseded | None = None
        self.execution: Execution | None = None
        self.question = ""
        self.human: HumanMessage | None = None
        self.records: Records | None = None
        self.resources = PreparedResources()
        self.closing: tuple[BaseMessage, ...] = ()  # the thread's open agent calls, answered
        self.answer: str | None = None  # the workflow's answer, for the thread
        # the execution's status, written once the turn's row is stored: (id, status, fields)
        self.conclusion: tuple[int, str, dict[str, Any]] | None = None

    async def check(self, run: Run) -> None:
        pass

    async def prepare(self, run: Run, superseded: Superseded | None) -> None:
        self.records = Records(run.client, run.context)
        self.superseded = superseded

    async def execute(self, run: Run) -> None:
        try:
            if self.waiting is not None:
                await self._decide(run, self.waiting)
            else:
                await self._new(run)
        except BackendError as exc:
            raise Unavailable(NOT_RECORDED) from exc

    def deadline_s(self, run: Run) -> float:
        return run.settings.agent.run_deadline_s

    async def stop(self, run: Run, reason: Code) -> None:
        """Close the step under way: past the deadline the workflow fails there; a lost lease
        cancels it (the thread is left to the run that took it); the person's stop or the
        daily budget cancels it and the thread is told."""
        execution, self.execution = self.execution, None
        if execution is None:
            return
        if reason == Code.DEADLINE:
            error = {"code": Code.BUDGET_EXHAUSTED, "message": "the workflow ran out of time"}
            self._conclude(run, execution, await execution.abandon(error))
        elif reason in LEASE_LOST:
            error = {"code": Code.CANCELLED, "message": LEASE_LOST[reason]}
            await self._abandoned(execution, error)
        else:
            message = STOPPED.get(reason, STOPPED[Code.CANCELLED])
            error = {"code": Code.CANCELLED, "message": message}
            await execution.abandon(error)
            self.answer = f"The workflow {execution.definition.name} was stopped."
            self.conclusion = (execution.execution_id, "cancelled", {"error": error})

    def result(self, run: Run) -> RunResult:
        """The thread's open agent calls answered, then the question and the workflow's answer
        (for later agent turns); the turn's row, which the execution's record links."""
        thread: list[ThreadWrite] = []
        if self.closing:  # their interrupt is superseded
            thread.append(ThreadWrite(self.closing, "tools"))
        if self.answer is not None:
            question = self.human or HumanMessage(content=self.question)
            thread.append(ThreadWrite((question, AIMessage(content=self.answer)), "model"))
        then = self._link if self.conclusion is not None else None
        return RunResult(thread=tuple(thread), row=run.show.record(), then=then)

    async def _link(self, message_id: int | None) -> None:
        """Link the execution to the turn's stored row, with its status."""
        assert self.conclusion is not None
        execution_id, status, fields = self.conclusion
        await self._records.update(execution_id, status, message_id=message_id, **fields)

    @property
    def _records(self) -> Records:
        assert self.records is not None, "prepare() first"
        return self.records

    # -- a new message ------------------------------------------------------------------------

    async def _new(self, run: Run) -> None:
        assert self.definition is not None and self.superseded is not None
        attachments = await attachments_of(run)
        question = await new_message(run, self.superseded, attachments)
        self.closing, self.resources = question.closing, question.resources
        request = _request(run)
        execution_id = await self._records.start(self.definition.name, request)
        self.question, self.human = request["text"], question.human
        await self._drive(run, self._execution(run, self.definition, execution_id, request, {}))

    # -- running and concluding ---------------------------------------------------------------

    async def _drive(
        self,
        run: Run,
        execution: Execution,
        *,
        start: int = 0,
        approved: hitl.Pending | None = None,
    ) -> None:
        self.execution = execution  # what `stop` closes if the run ends early
        outcome: ExecutionOutcome = await execution.run(start=start, approved=approved)
        self.execution = None
        self._conclude(run, execution, outcome)

    async def _abandoned(self, execution: Execution, error: dict[str, Any]) -> None:
        try:
            await execution.abandon(error)
            await self._records.update(execution.execution_id, "cancelled", error=error)
        except BackendError as exc:
            log.warning("could not close workflow %s: %s", execution.execution_id, exc)

    def _conclude(self, run: Run, execution: Execution, outcome: ExecutionOutcome) -> None:
        name = execution.definition.name
        if isinstance(outcome, Paused):
            schema = hitl.argument_schema(run.tools.get(outcome.pending.tool))
            run.show.confirm(dataclasses.replace(outcome.pending, schema=schema))
            record = {**outcome.pending.record(), "step_index": outcome.step_index}
            self.conclusion = (execution.execution_id, "waiting", {"pending": record})
            return
        fields: dict[str, Any]
        if isinstance(outcome, Completed):
            answer = outcome.final_answer
            run.show.text(f"workflow-{execution.execution_id}", answer)
            status, fields = "completed", {"final_answer": answer}
        else:
            where = (
                "its final answer" if outcome.step_index is None else f"step {outcome.step_name}"
            )
            answer = f"The workflow {name} stopped at {where}: {outcome.error['message']}"
            if outcome.error["code"] != Code.BUDGET_EXHAUSTED:  # the skeleton says that one
                details = {"workflow": name, **outcome.error}
                run.show.fail(AgentError(answer, code=Code.WORKFLOW_FAILED, details=details))
            status, fields = "failed", {"error": outcome.error}
        self.answer = answer
        self.conclusion = (execution.execution_id, status, fields)

    def _execution(
        self,
        run: Run,
        definition: Definition,
        execution_id: int,
        request: dict[str, Any],
        outputs: dict[str, Any],
    ) -> Execution:
        services = StepServices(
            tools=run.tools,
            model=run.model,
            context=run.context,
            records=self._records,
            config={
                "configurable": {"thread_id": run.context.conversation_id},
                "callbacks": run.config["callbacks"],
            },
            check=run.check,
        )
        template_context = {
            "input": {k: request.get(k) for k in ("text", "files", "tables", "focus", "lang")},
            "steps": outputs,
            "now": request.get("now"),
            "today": request.get("today"),
        }
        return Execution(
            definition=definition,
            execution_id=execution_id,
            services=services,
            timeline=Timeline(run.show, definition, execution_id),
            template_context=template_context,
            extra_prompt=self.resources.content(),
        )

    # -- a decision ---------------------------------------------------------------------------

    async def _decide(self, run: Run, waiting: dict[str, Any]) -> None:
        pending = hitl.Pending.from_record(waiting.get("pending") or {})
        call_id = run.submit.options.call_id
        if pending is None or (run.submit.action == "confirm" and not call_id):
            raise AgentError(
                "A confirmation must name the call it approves (options.call_id); nothing was run.",
                code=Code.NO_PENDING_CONFIRMATION,
            )
        if call_id is not None and call_id != pending.call_id:
            raise AgentError(
                "That confirmation card is out of date; nothing was run.",
                code=Code.NO_PENDING_CONFIRMATION,
            )
        edited = run.submit.options.args
        if edited is not None:  # checked before the claim: a refused edit leaves it waiting
            edited = hitl.checked_edit(pending, edited, run.tools.get(pending.tool))
        execution_id = int(waiting["id"])
        try:  # claim it: of two decisions racing, one resumes, the other is told nothing waits
            await self._records.update(execution_id, "running", expected_status="waiting")
        except BackendError as exc:
            if exc.status == 409:
                raise AgentError(
                    "Nothing is waiting any more.", code=Code.NO_PENDING_CONFIRMATION
                ) from exc
            raise
        run.history.append_later(**hitl.decision_record(pending, run.submit.action, edited=edited))
        if edited is not None:  # the step runs the person's arguments
            pending = dataclasses.replace(pending, args=edited)
        request = dict(waiting.get("input") or {})
        self.question = str(request.get("text", ""))
        found = {d.name: d for d in await definitions.fetch(run.client, run.context)}
        definition = found.get(str(waiting["workflow_name"]))
        index = int((waiting.get("pending") or {}).get("step_index", 0))
        if definition is None or index >= len(definition.steps):
            failed = Failed(
                index, "?", {"code": Code.WORKFLOW_FAILED, "message": "the workflow is gone"}
            )
            self._conclude(run, self._orphan(run, waiting), failed)
            return
        outputs = {
            s["step_name"]: s["output"]
            for s in waiting.get("steps", [])
            if s.get("status") == "completed"
        }
        execution = self._execution(run, definition, execution_id, request, outputs)
        if run.submit.action == "reject":
            await self._rejected(run, execution, index)
            return
        await self._drive(run, execution, start=index, approved=pending)

    async def _rejected(self, run: Run, execution: Execution, index: int) -> None:
        step = execution.definition.steps[index]
        error = {"code": Code.REJECTED, "message": "Not run: the person rejected this call."}
        execution.timeline.failed(index, step, error)
        await execution.services.records.step(
            execution.execution_id,
            index,
            step_type=step.type,
            step_name=step.name,
            status="failed",
            error=error,
        )
        name = execution.definition.name
        message = f"The workflow {name} stopped: the person rejected {step.name}."
        run.show.notice(Code.WORKFLOW_STOPPED, message, {"workflow": name})
        self.answer = message
        self.conclusion = (execution.execution_id, "cancelled", {"error": error})

    def _orphan(self, run: Run, waiting: dict[str, Any]) -> Execution:
        stub = Definition(
            name=str(waiting["workflow_name"]),
            description="",
            trigger_keywords=(),
            steps=(),
            final_answer="",
        )
        input_ = dict(waiting.get("input") or {})
        return self._execution(run, stub, int(waiting["id"]), input_, {})


def _request(run: Run) -> dict[str, Any]:
    """The execution's input, and what its templates see as `input` (plus the time)."""
    started = datetime.now(UTC).replace(microsecond=0)
    selected = run.submit.options.resources
    return {
        "text": run.submit.text,
        "files": list(selected.files),
        "tables": list(selected.tables),
        "focus": run.context.focus,
        "lang": matcher.language(run.submit.text),
        "now": started.isoformat(),
        "today": started.replace(hour=0, minute=0, second=0).isoformat(),
    }


def choose(named: str | None, text: str, found: list[Definition]) -> Definition | None:
    """The workflow a new message runs: the one it names, else the one its keywords match."""
    if named is None:
        return matcher.match(text, found)
    for definition in found:
        if definition.name == named:
            return definition
    raise AgentError(f"There is no workflow named {named!r}.", code=Code.INVALID_INPUT)
