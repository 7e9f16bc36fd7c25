"""Modes `dynamic` and `none`: the agent graph streams one answer (a new message, or the
resumption of a confirmed or rejected call); chat-only is the same graph with no tools offered.

`new_message` (the question as the thread takes it: attachments, resources, notices, the saved
user row) is shared with workflow runs, which put the question to a workflow instead.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from typing import Any

from langchain.agents.middleware.model_call_limit import ModelCallLimitExceededError
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langgraph.errors import GraphRecursionError
from langgraph.types import Command, Durability, StreamMode

from agent import hitl, recall, resources
from agent.backend_client import BackendError
from agent.checkpoints import StoreUnavailable
from agent.documents import PreparedAttachments, prepare_attachments, store
from agent.errors import AgentError, Code
from agent.middleware import LlmError
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
        if pending:  # its card's Edit form is built from the tool's argument schema
            schema = hitl.argument_schema(run.tools.get(pending[0].tool))
            run.turn.confirm(dataclasses.replace(pending[0], schema=schema))

    async def stop(self, run: Run) -> None:
        await close_open_calls(run)

    def record(self, run: Run) -> tuple[str, dict[str, Any]]:
        return run.turn.record()


def resume(run: Run, snapshot: Any) -> Command[Any]:
    """The thread's pending call, confirmed or rejected (ConfirmationError if none fits)."""
    options = run.submit.options
    waiting = hitl.pending_of(snapshot)
    tool = run.tools.get(waiting[0].tool) if waiting and options.args is not None else None
    pending, command = hitl.resolve(
        snapshot, run.submit.action, options.call_id, args=options.args, tool=tool
    )
    run.append_later(**hitl.decision_record(pending, run.submit.action, edited=options.args))
    if run.submit.action == "confirm":  # the card shows the arguments that run
        args = pending.args if options.args is None else options.args
        run.turn.tool_start(ToolCall(name=pending.tool, args=args, id=pending.call_id))
    return command


async def new_message(
    run: Run, snapshot: Any, *, supersede_workflows: bool = True
) -> dict[str, Any]:
    """The graph input of a new message: the messages closing the thread's open calls, then
    the question (with its attachments and resources); its user row is queued."""
    submit, settings = run.submit, run.settings
    attachments = await prepare_attachments(submit.files, settings)
    waiting = hitl.pending_of(snapshot)
    closing = run.reject_pending(snapshot)
    # No checkpoint (new, or cleared by retention): start from the history, if it has any.
    if not hitl.has_checkpoint(snapshot) and run.lease.thread_has("has_history"):
        closing = [*await recall.earlier_messages(run.client, run.context), *closing]
    metadata: dict[str, Any] = {}
    if attachments.documents:
        metadata["attachments"] = attachments.metadata()
    if submit.truncated:
        metadata["truncated"] = True
        run.turn.notice(
            Code.TRUNCATED,
            f"Your message was longer than {settings.agent.max_message_chars:,} "
            "characters and was cut.",
        )
    for notice in attachments.notices:
        run.turn.notice(notice.code, notice.message, notice.details)
    run.resources = await _read_resources(run, attachments)
    if run.resources.record:
        metadata["resources"] = run.resources.record
    if submit.mode != "dynamic":
        metadata["mode"] = submit.mode
    for item in run.resources.notices:
        run.turn.notice(item.code, item.message, item.details)
    text = "\n\n".join(p for p in (submit.text, run.resources.content()) if p)
    content = attachments.content(text)
    retried = None if waiting else unanswered_question(snapshot, content)
    # The same question again after a turn that never answered it (its process died, or
    # it failed or was stopped before any text): the thread keeps it once, under its id.
    run.human = retried or HumanMessage(content=content, id=str(uuid.uuid4()))
    if supersede_workflows:
        run.later(run.supersede_workflows())
    if retried is None or not await _question_saved(run):
        run.later(_save_question(run, metadata, attachments))
    return {"messages": [*closing, run.human]}


async def _save_question(
    run: Run, metadata: dict[str, Any], attachments: PreparedAttachments
) -> None:
    message_id = await run.append("user", run.submit.text, metadata)
    await store.record(run.client, run.context, message_id=message_id, prepared=attachments)


async def _question_saved(run: Run) -> bool:
    """Whether the history's last question is this submit's text (saved by the turn that
    did not answer it), so a retry adds no second user row."""
    path = f"/api/assistant/conversations/{run.context.conversation_id}/history"
    try:
        body = await run.client.call(run.context, "GET", path, params={"limit": 10})
    except BackendError as exc:
        log.warning("could not read the history before a retry: %s", exc)
        return False
    questions = [m for m in body.get("items", []) if m.get("role") == "user"]
    return bool(questions) and questions[-1].get("content") == run.submit.text


async def _read_resources(
    run: Run, attachments: PreparedAttachments
) -> resources.PreparedResources:
    """The selected files and tables, read as the user, within their share of the input."""
    used = resources.tokens_of((run.submit.text, *attachments.blocks))
    cap = resources.cap(run.settings, used)
    return await resources.prepare(
        run.client, run.context, run.submit.options.resources, cap_tokens=cap
    )


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


def unanswered_question(snapshot: Any, content: Any) -> HumanMessage | None:
    """The thread's last question when it equals `content` and nothing answered it: no model
    text came after it, only tool calls and their results (a turn cut short)."""
    for message in reversed((snapshot.values or {}).get("messages", [])):
        if isinstance(message, HumanMessage):
            return message if message.content == content else None
        if isinstance(message, AIMessage) and message.text and not message.tool_calls:
            return None
    return None


def _answering(update: Any) -> bool:
    """Whether a step shows the model's answer (a model or tool step; AnswerText tells of the
    tokens)."""
    return isinstance(update, dict) and bool({"model", "tools"} & update.keys())
