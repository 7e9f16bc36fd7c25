"""Mode `yaml`: a predefined workflow instead of the agent loop (CONTRACT.md, "Modes").

A new message runs the workflow named by `options.workflow`, else the one its keywords match;
no match is a NO_WORKFLOW_MATCHED notice and the agent's (`dynamic`) answer. A decision
resumes what is paused: the thread's agent call if one is pending, else the conversation's
workflow step waiting for confirmation. The final answer (or the failure) is added to the
thread, so a following agent turn can refer to it.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from agent import hitl
from agent.backend_client import BackendError
from agent.session import RunError, Session
from agent.workflows import definitions, matcher
from agent.workflows.definitions import Definition
from agent.workflows.engine import Completed, Execution, Failed, Outcome, Paused, Services
from agent.workflows.records import Records
from agent.workflows.timeline import Timeline

log = logging.getLogger(__name__)


class WorkflowSession(Session):
    async def run(self) -> None:
        self.records = Records(self.client, self.context)
        try:
            if self.submit.action:
                await self._decide()
            else:
                await self._new()
        except BackendError as exc:
            await self._flush()
            raise RunError(
                "BACKEND_UNAVAILABLE", "The platform could not record the workflow; try again."
            ) from exc

    async def _flush(self) -> None:
        """Save what was deferred (the question, decisions) even when the run fails."""
        self.start_writes()
        await asyncio.gather(*self.writes, return_exceptions=True)

    # -- a new message ------------------------------------------------------------------------

    async def _new(self) -> None:
        found = await definitions.fetch(self.client, self.context)
        chosen = _choose(self.submit.options.workflow, self.submit.text, found)
        if chosen is None:
            self.turn.notice(
                "NO_WORKFLOW_MATCHED",
                "No workflow matches this message; the assistant answers it directly.",
            )
            await super().run()
            return
        await self._supersede_now()
        snapshot = await self.agent.aget_state(self.config)
        graph_input = await self._new_message(snapshot)
        closing: list[BaseMessage] = graph_input["messages"][:-1]
        if closing:  # answer the thread's open agent calls now (their interrupt is superseded)
            await self.agent.aupdate_state(self.config, {"messages": closing}, as_node="tools")
        request = self._request()
        execution_id = await self.records.start(chosen.name, request)
        execution = self._execution(chosen, execution_id, request, {})
        await self._drive(execution, request["text"], self.human)

    async def _supersede_now(self) -> None:
        """Cancel a waiting workflow before this one starts (not later: it might pause too)."""
        self.workflows_superseded = True
        for cancelled in await self.records.cancel_waiting():
            pending = hitl.Pending.from_record(cancelled.get("pending") or {})
            if pending is not None:
                reason = "superseded by a new message"
                self.append_later(**hitl.decision_record(pending, "reject", reason=reason))

    def _request(self) -> dict[str, Any]:
        """The execution's input, and what its templates see as `input` (plus the time)."""
        started = datetime.now(UTC).replace(microsecond=0)
        selected = self.submit.options.resources
        return {
            "text": self.submit.text,
            "files": list(selected.files),
            "tables": list(selected.tables),
            "focus": self.context.focus,
            "lang": matcher.language(self.submit.text),
            "now": started.isoformat(),
            "today": started.replace(hour=0, minute=0, second=0).isoformat(),
        }

    def _execution(
        self,
        definition: Definition,
        execution_id: int,
        request: dict[str, Any],
        outputs: dict[str, Any],
    ) -> Execution:
        services = Services(
            tools=self.tools,
            model=self.model,
            context=self.context,
            records=self.records,
            config={
                "configurable": {"thread_id": self.context.conversation_id},
                "callbacks": self.config["callbacks"],
            },
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
            timeline=Timeline(self.turn, definition, execution_id),
            template_context=template_context,
            extra_prompt=self.resources.content(),
        )

    # -- running and concluding ---------------------------------------------------------------

    async def _drive(
        self,
        execution: Execution,
        question: str,
        human: HumanMessage | None,
        *,
        start: int = 0,
        approved: hitl.Pending | None = None,
    ) -> None:
        self.start_writes()  # the question and decisions are saved while the steps run
        try:
            async with asyncio.timeout(self.settings.agent.run_deadline_s):
                outcome: Outcome = await execution.run(start=start, approved=approved)
        except TimeoutError:
            outcome = await execution.abandon(
                {"code": "BUDGET_EXHAUSTED", "message": "the workflow ran out of time"}
            )
            self.turn.error("BUDGET_EXHAUSTED", "This workflow ran out of time.")
        except asyncio.CancelledError:
            await asyncio.shield(self._stopped_workflow(execution, question, human))
            raise
        await self._conclude(execution, outcome, question, human)

    async def _conclude(
        self, execution: Execution, outcome: Outcome, question: str, human: HumanMessage | None
    ) -> None:
        name = execution.definition.name
        if isinstance(outcome, Paused):
            self.turn.confirm(outcome.pending)
            await self._finish()
            record = {**outcome.pending.record(), "step_index": outcome.step_index}
            await self.records.update(
                execution.execution_id, "waiting", pending=record, message_id=self.message_id
            )
            return
        fields: dict[str, Any]
        if isinstance(outcome, Completed):
            answer = outcome.final_answer
            self.turn.text(f"workflow-{execution.execution_id}", answer)
            status, fields = "completed", {"final_answer": answer}
        else:
            where = (
                "its final answer" if outcome.step_index is None else f"step {outcome.step_name}"
            )
            answer = f"The workflow {name} stopped at {where}: {outcome.error['message']}"
            if outcome.error["code"] != "BUDGET_EXHAUSTED":
                self.turn.error("WORKFLOW_FAILED", answer, {"workflow": name, **outcome.error})
            status, fields = "failed", {"error": outcome.error}
        await self._remember(question, human, answer)
        await self._finish()
        await self.records.update(
            execution.execution_id, status, message_id=self.message_id, **fields
        )

    async def _remember(self, question: str, human: HumanMessage | None, answer: str) -> None:
        """Add the question and the workflow's answer to the thread (for later agent turns)."""
        messages = [human or HumanMessage(content=question), AIMessage(content=answer)]
        await self.agent.aupdate_state(self.config, {"messages": messages}, as_node="model")

    async def _stopped_workflow(
        self, execution: Execution, question: str, human: HumanMessage | None
    ) -> None:
        try:
            error = {"code": "CANCELLED", "message": "The person stopped the workflow."}
            await execution.abandon(error)
            await self._remember(
                question, human, f"The workflow {execution.definition.name} was stopped."
            )
            await self._finish()
            await self.records.update(execution.execution_id, "cancelled", error=error)
        except Exception:
            log.exception("could not close the stopped workflow %s", execution.execution_id)

    # -- a decision ---------------------------------------------------------------------------

    async def _decide(self) -> None:
        snapshot = await self.agent.aget_state(self.config)
        if hitl.pending_of(snapshot):
            await super().run()  # the agent's own confirmation
            return
        waiting = await self.records.waiting()
        if waiting is None:
            await super().run()  # says CHECKPOINT_EXPIRED or NO_PENDING_CONFIRMATION
            return
        pending = hitl.Pending.from_record(waiting.get("pending") or {})
        call_id = self.submit.options.call_id
        if pending is None or (self.submit.action == "confirm" and not call_id):
            raise RunError(
                "NO_PENDING_CONFIRMATION",
                "A confirmation must name the call it approves (options.call_id); nothing was run.",
            )
        if call_id is not None and call_id != pending.call_id:
            raise RunError(
                "NO_PENDING_CONFIRMATION",
                "That confirmation card is out of date; nothing was run.",
            )
        await self._resume_workflow(waiting, pending)

    async def _resume_workflow(self, waiting: dict[str, Any], pending: hitl.Pending) -> None:
        execution_id = int(waiting["id"])
        try:  # claim it: of two decisions racing, one resumes, the other is told nothing waits
            await self.records.update(execution_id, "running", expected_status="waiting")
        except BackendError as exc:
            if exc.status == 409:
                raise RunError("NO_PENDING_CONFIRMATION", "Nothing is waiting any more.") from exc
            raise
        self.append_later(**hitl.decision_record(pending, self.submit.action))
        request = dict(waiting.get("input") or {})
        found = {d.name: d for d in await definitions.fetch(self.client, self.context)}
        definition = found.get(str(waiting["workflow_name"]))
        index = int((waiting.get("pending") or {}).get("step_index", 0))
        if definition is None or index >= len(definition.steps):
            failed = Failed(
                index, "?", {"code": "WORKFLOW_FAILED", "message": "the workflow is gone"}
            )
            await self._conclude(self._orphan(waiting), failed, request.get("text", ""), None)
            return
        outputs = {
            s["step_name"]: s["output"]
            for s in waiting.get("steps", [])
            if s.get("status") == "completed"
        }
        execution = self._execution(definition, execution_id, request, outputs)
        question = str(request.get("text", ""))
        if self.submit.action == "reject":
            await self._rejected(execution, index, question)
            return
        await self._drive(execution, question, None, start=index, approved=pending)

    async def _rejected(self, execution: Execution, index: int, question: str) -> None:
        step = execution.definition.steps[index]
        error = {"code": "REJECTED", "message": "Not run: the person rejected this call."}
        execution.timeline.failed(index, step, error)
        await execution.services.records.step(
            execution.execution_id,
            index,
            step_type=step.type,
            step_name=step.name,
            status="failed",
            error=error,
        )
        message = (
            f"The workflow {execution.definition.name} stopped: the person rejected {step.name}."
        )
        self.turn.notice("WORKFLOW_STOPPED", message, {"workflow": execution.definition.name})
        await self._remember(question, None, message)
        await self._finish()
        await self.records.update(
            execution.execution_id, "cancelled", message_id=self.message_id, error=error
        )

    def _orphan(self, waiting: dict[str, Any]) -> Execution:
        stub = Definition(
            name=str(waiting["workflow_name"]),
            description="",
            trigger_keywords=(),
            steps=(),
            final_answer="",
        )
        return self._execution(stub, int(waiting["id"]), dict(waiting.get("input") or {}), {})


def _choose(named: str | None, text: str, found: list[Definition]) -> Definition | None:
    if named is None:
        return matcher.match(text, found)
    for definition in found:
        if definition.name == named:
            return definition
    raise RunError("INVALID_INPUT", f"There is no workflow named {named!r}.")
