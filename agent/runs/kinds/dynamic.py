"""Mode `dynamic`: the agent graph streams one answer to a new message, or resumes the
thread's pending call once a person confirmed or rejected it.

The question (attachments, resources, notices, the saved user row) is built by
agent/runs/question.py; the graph's answer is streamed by agent/runs/answer.py, both shared
with the `none` kind (agent/runs/kinds/none.py).
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import ToolCall
from langgraph.types import Command

from agent import hitl
from agent.documents import PreparedAttachments
from agent.errors import Code
from agent.runs import answer
from agent.runs.question import attachments_of, new_message
from agent.runs.result import Question, RunResult, ThreadWrite
from agent.runs.state import Run
from agent.runs.supersede import Superseded

log = logging.getLogger(__name__)


class DynamicRun:
    """The agent graph: a new message, or a decision on the thread's pending call."""

    supersedes_at_once = False
    out_of_time = answer.OUT_OF_TIME

    def __init__(self, snapshot: Any = None) -> None:
        self.snapshot = snapshot  # the thread's state, when routing already read it
        self.attachments: PreparedAttachments | None = None
        self.question: Question | None = None
        self.graph_input: Command[Any] | dict[str, Any] = {}
        self.closing: ThreadWrite | None = None  # what a stopped answer leaves for the thread

    async def check(self, run: Run) -> None:
        if not run.submit.action:
            self.attachments = await attachments_of(run)

    async def prepare(self, run: Run, superseded: Superseded | None) -> None:
        if superseded is None or self.attachments is None:  # a decision
            snapshot = self.snapshot or await run.agent.aget_state(run.config)
            self.graph_input = resume(run, snapshot)
            return
        self.question = await new_message(run, superseded, self.attachments)
        self.graph_input = self.question.graph_input()

    async def execute(self, run: Run) -> None:
        await answer.answer(run, self.graph_input)

    def deadline_s(self, run: Run) -> float:
        return answer.deadline_s(run.settings)

    async def stop(self, run: Run, reason: Code) -> None:
        # whatever the reason: a stopped answer leaves no open call
        self.closing = await answer.close_open_calls(run, self.question)

    def result(self, run: Run) -> RunResult:
        return RunResult(thread=_written(self.closing), row=run.show.record())


def _written(write: ThreadWrite | None) -> tuple[ThreadWrite, ...]:
    return () if write is None else (write,)


def resume(run: Run, snapshot: Any) -> Command[Any]:
    """The thread's pending call, confirmed or rejected (ConfirmationError if none fits)."""
    options = run.submit.options
    waiting = hitl.pending_of(snapshot)
    tool = run.tools.get(waiting[0].tool) if waiting and options.args is not None else None
    pending, command = hitl.resolve(
        snapshot, run.submit.action, options.call_id, args=options.args, tool=tool
    )
    run.history.append_later(
        **hitl.decision_record(pending, run.submit.action, edited=options.args)
    )
    if run.submit.action == "confirm":  # the card shows the arguments that run
        args = pending.args if options.args is None else options.args
        run.show.tool_start(ToolCall(name=pending.tool, args=args, id=pending.call_id))
    return command
