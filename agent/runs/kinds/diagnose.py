"""`options.mode = "diagnose"`: one diagnosis run as a chat turn.

The turn is stored like any other (the question as a user row, the cards and the `diagnosis`
message as the assistant row's `metadata.parts`); its outcome is added to the conversation's
agent thread as the question and a short summary, so the next chat turn can refer to it. The
run itself sees only the question, the focus and the previous diagnosis.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from typing import Any

import openai
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphRecursionError

from agent.diagnosis.budget import RunStopped, StopReason
from agent.diagnosis.envelope import evidence_tools
from agent.diagnosis.previous import previous_diagnosis
from agent.diagnosis.request import PreviousTurn, QueryTooLong, check_query, model_input
from agent.diagnosis.run import DiagnosisOutcome, DiagnosisRun
from agent.diagnosis.summary import summarise
from agent.errors import Code, InvalidInput
from agent.middleware import llm_failure
from agent.runs.question import opening
from agent.runs.result import RunResult, ThreadWrite
from agent.runs.state import Run
from agent.runs.supersede import Superseded

log = logging.getLogger(__name__)
UNFINISHED = {"code": Code.CANCELLED, "message": "The diagnosis stopped before this call finished."}


class DiagnosisChat:
    """One evidence-based diagnosis, persisted like a chat turn (a `RunKind`)."""

    supersedes_at_once = False
    out_of_time = None  # past its deadline a diagnosis is `stopped` with DEADLINE, not an error

    def __init__(self) -> None:
        self.outcome: DiagnosisOutcome | None = None
        self.summary = ""
        self.closing: list[BaseMessage] = []
        self.previous: PreviousTurn | None = None
        self.diagnosis: DiagnosisRun | None = None
        self._shown: list[str] = []  # call ids of the cards this run started
        self._final = ""  # the text of the model's last round

    async def check(self, run: Run) -> None:
        _check_input(run)

    async def prepare(self, run: Run, superseded: Superseded | None) -> None:
        assert superseded is not None, "a diagnosis is a new message"
        self.previous, self.closing = await asyncio.gather(
            previous_diagnosis(
                run.client, run.context, max_bytes=run.settings.diagnosis.max_previous_bytes
            ),
            opening(run, superseded),
        )
        run.history.append_later("user", run.submit.text, {"mode": "diagnose"})

    async def execute(self, run: Run) -> None:
        self.diagnosis = DiagnosisRun(
            run.settings.diagnosis,
            model=run.model,  # the agent's: one client for the process, closed with it
            tools=evidence_tools(run.client),
        )
        outcome = await self._diagnose(run, self.diagnosis)
        self._conclude(run, outcome)

    def deadline_s(self, run: Run) -> float:
        return run.settings.diagnosis.deadline_s

    async def stop(self, run: Run, reason: Code) -> None:
        if self.diagnosis is not None and self.outcome is None:
            why: StopReason = Code.DEADLINE if reason == Code.DEADLINE else Code.CANCELLED
            self._conclude(run, self.diagnosis.stopped(why))

    def result(self, run: Run) -> RunResult:
        """The turn's row (the summary, the cards and the `diagnosis` message), and for the
        thread the question and the outcome's summary, so the next chat turn can refer to it."""
        _, metadata = run.show.record()
        about = {"query": run.submit.text}
        thread: tuple[ThreadWrite, ...] = ()
        if self.outcome is not None:
            about["run_id"] = self.outcome.run_id
            told = (*self.closing, HumanMessage(content=run.submit.text), AIMessage(self.summary))
            thread = (ThreadWrite(told, "model"),)
        row = (self.summary, {**metadata, "mode": "diagnose", "diagnosis": about})
        return RunResult(thread=thread, row=row)

    async def _diagnose(self, run: Run, diagnosis: DiagnosisRun) -> DiagnosisOutcome:
        question = model_input(run.submit.text, focus=run.submit.focus, previous=self.previous)
        context = dataclasses.replace(run.context, audit_run_id=diagnosis.run_id)
        config: RunnableConfig = {
            **run.config,
            "metadata": {**run.config.get("metadata", {}), "diagnosis_run_id": diagnosis.run_id},
            "recursion_limit": diagnosis.recursion_limit,
        }
        graph_input = {"messages": [HumanMessage(content=question)]}
        try:
            async for update in diagnosis.agent.astream(
                graph_input, config, context=context, stream_mode="updates"
            ):
                self._show(run, update)
                run.check()
        except RunStopped as stop:
            return diagnosis.stopped(stop.reason)
        except GraphRecursionError:
            return diagnosis.stopped(Code.BUDGET_EXHAUSTED)
        except openai.APIError as exc:
            failure = llm_failure(exc)
            log.warning("diagnosis %s: %s (%s)", diagnosis.run_id, failure, type(exc).__name__)
            return diagnosis.failed(failure.code)
        return diagnosis.concluded(self._final)

    def _show(self, run: Run, update: Any) -> None:
        """Tool cards from the run's updates; the model's text is the draft, not shown."""
        for node, change in (update or {}).items():
            messages = change.get("messages", []) if isinstance(change, dict) else []
            for message in messages:
                if node == "model" and isinstance(message, AIMessage):
                    self._final = "" if message.tool_calls else message.text
                    for call in message.tool_calls:
                        run.show.tool_start(call)
                        self._shown.append(call["id"] or "")
                elif isinstance(message, ToolMessage):
                    run.show.tool_result(_card(message))

    def _conclude(self, run: Run, outcome: DiagnosisOutcome) -> None:
        """Show the outcome (the thread is told through `result`)."""
        self.outcome = outcome
        for call_id in self._shown:
            if run.show.is_open(call_id):
                content = json.dumps({"error": UNFINISHED})
                run.show.tool_result(ToolMessage(content, tool_call_id=call_id, status="error"))
        metadata = outcome.metadata()
        self.summary = summarise(metadata)
        run.show.diagnosis(metadata, self.summary)


def _check_input(run: Run) -> None:
    """Refuse what a diagnosis cannot take, before anything runs or is stored."""
    submit = run.submit
    resources = submit.options.resources
    if submit.files or resources.files or resources.tables:
        message = "A diagnosis takes a question only: no files or resources."
        raise InvalidInput(message)
    limit = run.settings.diagnosis.max_query_bytes
    try:
        if submit.truncated:
            raise QueryTooLong(limit + 1, limit)
        check_query(submit.text, max_bytes=limit)
    except QueryTooLong as exc:
        message = (
            f"The question is too long for a diagnosis: at most {limit:,} bytes (UTF-8). "
            "Shorten it; nothing was run."
        )
        raise InvalidInput(message, details={"max_bytes": limit}) from exc


def _card(message: ToolMessage) -> ToolMessage:
    """How a tool card shows an observation: an ERROR one as the card's error."""
    if message.status != "error":
        return message
    try:
        body = json.loads(str(message.content))
        error = {"code": str(body["code"]), "message": str(body["message"])}
    except (ValueError, KeyError, TypeError):
        error = {"code": Code.TOOL_FAILED, "message": "The tool failed."}
    return ToolMessage(
        json.dumps({"error": error}),
        tool_call_id=message.tool_call_id,
        name=message.name,
        status="error",
    )
