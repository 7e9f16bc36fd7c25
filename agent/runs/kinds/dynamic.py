"""Modes `dynamic` and `none`: the agent graph streams one answer (a new message, or the
resumption of a confirmed or rejected call); chat-only is the same graph with no tools offered.

The question itself (attachments, resources, notices, the saved user row) is built by
agent/runs/question.py, shared with the workflow kind.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from typing import Any

from langchain.agents.middleware.model_call_limit import ModelCallLimitExceededError
from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.errors import GraphRecursionError
from langgraph.types import Command, Durability, StreamMode

from agent import hitl
from agent.checkpoints import StoreUnavailable
from agent.errors import AgentError, Code
from agent.middleware import LlmError
from agent.runs.question import new_message
from agent.runs.skeleton import Run
from agent.stream import AnswerText, apply

log = logging.getLogger(__name__)
# Each step's messages; the answer's tokens come by callback (agent/stream.py, AnswerText).
STREAM_MODE: StreamMode = "updates"
# Each step's checkpoint is stored before the next step starts: a tool runs only once the model
# turn that called it is in Postgres, so a process killed mid-tool leaves a call that the next
# run closes as cancelled, never one that ran but was forgotten (bench/durability.py: cost).
DURABILITY: Durability = "sync"


class DynamicRun:
    """The agent graph: a new message, or a decision on the thread's pending call. With
    `offer_tools=False` (mode `none`) the NoTools middleware offers no tools for the run."""

    def __init__(self, snapshot: Any = None, *, offer_tools: bool = True) -> None:
        self.snapshot = snapshot  # the thread's state, when routing already read it
        self.offer_tools = offer_tools
        self.graph_input: Command[Any] | dict[str, Any] = {}

    async def prepare(self, run: Run) -> None:
        if not self.offer_tools:
            run.context = dataclasses.replace(run.context, offer_tools=False)
        snapshot = self.snapshot or await run.agent.aget_state(run.config)
        if run.submit.action:
            self.graph_input = resume(run, snapshot)
        else:
            self.graph_input = await new_message(run, snapshot)

    async def execute(self, run: Run) -> None:
        pending: list[hitl.Pending] = []
        config = run.config_with(AnswerText(run.turn, then=run.start_writes))
        try:
            async with run.streaming():
                async for update in run.agent.astream(
                    self.graph_input,
                    config,
                    context=run.context,
                    stream_mode=STREAM_MODE,
                    durability=DURABILITY,
                ):
                    pending.extend(apply(run.turn, update))
                    if run.deferring and _answering(update):
                        run.start_writes()
                    run.check()
        except (LlmError, StoreUnavailable) as exc:
            run.turn.error(exc.code, exc.message)
        except (ModelCallLimitExceededError, GraphRecursionError):
            run.turn.error(Code.BUDGET_EXHAUSTED, "This request used up its model-call budget.")
        except TimeoutError:
            await close_open_calls(run)
            run.turn.error(Code.BUDGET_EXHAUSTED, "This request ran out of time.")
        except AgentError as exc:  # UsageLimit between two model calls: keep what was said
            await close_open_calls(run)
            run.turn.error(exc.code, exc.message, exc.details or None)
        if pending:
            run.turn.confirm(pending[0])

    async def stop(self, run: Run) -> None:
        await close_open_calls(run)

    def record(self, run: Run) -> tuple[str, dict[str, Any]]:
        return run.turn.record()


def resume(run: Run, snapshot: Any) -> Command[Any]:
    """The thread's pending call, confirmed or rejected (ConfirmationError if none fits)."""
    pending, command = hitl.resolve(snapshot, run.submit.action, run.submit.options.call_id)
    run.append_later(**hitl.decision_record(pending, run.submit.action))
    if run.submit.action == "confirm":
        run.turn.tool_start(ToolCall(name=pending.tool, args=pending.args, id=pending.call_id))
    return command


async def close_open_calls(run: Run) -> None:
    """Give every open tool call a 'cancelled' result and keep the partial answer.

    Order matters: results close the last AI turn; the question, if the run stopped before
    it was stored, comes after them (as in the input); the partial answer comes last.
    """
    snapshot = await run.agent.aget_state(run.config)
    messages = hitl.closing_messages(snapshot, reason="cancelled")
    for message in messages:
        if isinstance(message, ToolMessage) and run.turn.is_open(message.tool_call_id):
            run.turn.tool_result(message)
    stored = {m.id for m in (snapshot.values or {}).get("messages", [])}
    if run.human is not None and run.human.id not in stored:
        messages.append(run.human)
    if partial := run.turn.open_text():
        messages.append(AIMessage(content=partial, id=str(uuid.uuid4())))
    if messages:
        node = "tools" if any(isinstance(m, ToolMessage) for m in messages) else "model"
        await run.agent.aupdate_state(run.config, {"messages": messages}, as_node=node)


def _answering(update: Any) -> bool:
    """Whether a step shows the model's answer (a model or tool step; AnswerText tells of the
    tokens)."""
    return isinstance(update, dict) and bool({"model", "tools"} & update.keys())
