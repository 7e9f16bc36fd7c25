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

from agent import hitl, recall
from agent.diagnosis.budget import RunStopped
from agent.diagnosis.envelope import evidence_tools
from agent.diagnosis.previous import previous_diagnosis
from agent.diagnosis.request import PreviousTurn, QueryTooLong, check_query, model_input
from agent.diagnosis.run import DiagnosisRun, Outcome
from agent.diagnosis.summary import summarise
from agent.graph import build_model
from agent.session import RunError, Session

log = logging.getLogger(__name__)
UNFINISHED = {"code": "CANCELLED", "message": "The diagnosis stopped before this call finished."}


class DiagnosisSession(Session):
    """One evidence-based diagnosis, persisted like a chat turn."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.outcome: Outcome | None = None
        self.summary = ""
        self._shown: list[str] = []  # call ids of the cards this run started
        self._final = ""  # the text of the model's last round

    async def run(self) -> None:
        self._check_input()
        snapshot, previous = await asyncio.gather(
            self.agent.aget_state(self.config),
            previous_diagnosis(
                self.client, self.context, max_bytes=self.settings.diagnosis.max_previous_bytes
            ),
        )
        closing = self._supersede(snapshot)
        if not hitl.has_checkpoint(snapshot):  # new, or cleared by retention: keep the history
            closing = [*await recall.earlier_messages(self.client, self.context), *closing]
        self.later(self._supersede_workflows())
        self.append_later("user", self.submit.text, {"mode": "diagnose"})
        run = DiagnosisRun(
            self.settings.diagnosis,
            model=build_model(self.settings),
            tools=evidence_tools(self.client),
            cancelled=lambda: self.lease.lost,
        )
        try:
            outcome = await self._diagnose(run, previous)
        except asyncio.CancelledError:
            await asyncio.shield(self._conclude(run.stopped("CANCELLED"), closing))
            raise
        await self._conclude(outcome, closing)

    def _check_input(self) -> None:
        """Refuse what a diagnosis cannot take, before anything runs or is stored."""
        resources = self.submit.options.resources
        if self.submit.files or resources.files or resources.tables:
            message = "A diagnosis takes a question only: no files or resources."
            raise RunError("INVALID_INPUT", message)
        limit = self.settings.diagnosis.max_query_bytes
        try:
            if self.submit.truncated:
                raise QueryTooLong(limit + 1, limit)
            check_query(self.submit.text, max_bytes=limit)
        except QueryTooLong as exc:
            message = (
                f"The question is too long for a diagnosis: at most {limit:,} bytes (UTF-8). "
                "Shorten it; nothing was run."
            )
            raise RunError("INVALID_INPUT", message, {"max_bytes": limit}) from exc

    def _supersede(self, snapshot: Any) -> list[BaseMessage]:
        """A new message rejects a confirmation still pending in the thread (as in chat)."""
        waiting = hitl.pending_of(snapshot)
        for pending in waiting:
            record = hitl.decision_record(pending, "reject", reason="superseded by a new message")
            self.append_later(**record)
        return hitl.closing_messages(snapshot, reason="rejected" if waiting else "cancelled")

    async def _diagnose(self, run: DiagnosisRun, previous: PreviousTurn | None) -> Outcome:
        question = model_input(self.submit.text, focus=self.submit.focus, previous=previous)
        context = dataclasses.replace(self.context, run_id=run.run_id)
        config: RunnableConfig = {
            **self.config,
            "metadata": {**self.config.get("metadata", {}), "diagnosis_run_id": run.run_id},
            "recursion_limit": run.recursion_limit,
        }
        graph_input = {"messages": [HumanMessage(content=question)]}
        try:
            async with asyncio.timeout(self.settings.diagnosis.deadline_s):
                async for update in run.agent.astream(
                    graph_input, config, context=context, stream_mode="updates"
                ):
                    self.start_writes()
                    self._show(update)
        except RunStopped as stop:
            return run.stopped(stop.reason)
        except TimeoutError:
            return run.stopped("DEADLINE")
        except GraphRecursionError:
            return run.stopped("BUDGET_EXHAUSTED")
        except openai.APIError as exc:
            log.warning("diagnosis %s: model call failed (%s)", run.run_id, type(exc).__name__)
            return run.failed("LLM_ERROR")
        return run.concluded(self._final)

    def _show(self, update: Any) -> None:
        """Tool cards from the run's updates; the model's text is the draft, not shown."""
        for node, change in (update or {}).items():
            messages = change.get("messages", []) if isinstance(change, dict) else []
            for message in messages:
                if node == "model" and isinstance(message, AIMessage):
                    self._final = "" if message.tool_calls else message.text
                    for call in message.tool_calls:
                        self.turn.tool_start(call)
                        self._shown.append(call["id"] or "")
                elif isinstance(message, ToolMessage):
                    self.turn.tool_result(_card(message))

    async def _conclude(self, outcome: Outcome, closing: list[BaseMessage]) -> None:
        """Show the outcome, tell the thread, persist the turn."""
        self.outcome = outcome
        for call_id in self._shown:
            if self.turn.is_open(call_id):
                content = json.dumps({"error": UNFINISHED})
                self.turn.tool_result(ToolMessage(content, tool_call_id=call_id, status="error"))
        metadata = outcome.metadata()
        self.summary = summarise(metadata)
        self.turn.diagnosis(metadata, self.summary)
        try:
            if not self.lease.lost:  # else another run owns the thread now
                await self._remember(closing)
        finally:
            await self._finish()

    async def _remember(self, closing: list[BaseMessage]) -> None:
        """Add the question and the outcome's summary to the conversation's agent thread."""
        messages = [
            *closing,
            HumanMessage(content=self.submit.text),
            AIMessage(content=self.summary),
        ]
        await self.agent.aupdate_state(self.config, {"messages": messages}, as_node="model")

    def record(self) -> tuple[str, dict[str, Any]]:
        _, metadata = self.turn.record()
        about = {"query": self.submit.text}
        if self.outcome is not None:
            about["run_id"] = self.outcome.run_id
        return self.summary, {**metadata, "mode": "diagnose", "diagnosis": about}


def _card(message: ToolMessage) -> ToolMessage:
    """How a tool card shows an observation: an ERROR one as the card's error."""
    if message.status != "error":
        return message
    try:
        body = json.loads(str(message.content))
        error = {"code": str(body["code"]), "message": str(body["message"])}
    except (ValueError, KeyError, TypeError):
        error = {"code": "TOOL_FAILED", "message": "The tool failed."}
    return ToolMessage(
        json.dumps({"error": error}),
        tool_call_id=message.tool_call_id,
        name=message.name,
        status="error",
    )
