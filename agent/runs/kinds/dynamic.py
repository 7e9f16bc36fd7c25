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
from agent.errors import Code
from agent.runs.answer import answer, close_open_calls
from agent.runs.question import new_message
from agent.runs.state import Run

log = logging.getLogger(__name__)


class DynamicRun:
    """The agent graph: a new message, or a decision on the thread's pending call."""

    links_row = False
    out_of_time = "This request ran out of time."

    def __init__(self, snapshot: Any = None) -> None:
        self.snapshot = snapshot  # the thread's state, when routing already read it
        self.graph_input: Command[Any] | dict[str, Any] = {}

    async def prepare(self, run: Run) -> None:
        snapshot = self.snapshot or await run.agent.aget_state(run.config)
        if run.submit.action:
            self.graph_input = resume(run, snapshot)
        else:
            self.graph_input = await new_message(run, snapshot)

    async def execute(self, run: Run) -> None:
        await answer(run, self.graph_input)

    def deadline_s(self, run: Run) -> float:
        return run.settings.agent.run_deadline_s

    async def stop(self, run: Run, reason: Code) -> None:
        await close_open_calls(run)  # whatever the reason: a stopped answer leaves no open call

    def record(self, run: Run) -> tuple[str, dict[str, Any]]:
        return run.turn.record()

    async def stored(self, run: Run) -> None:
        pass


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
