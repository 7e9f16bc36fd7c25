"""Mode `none`: plain chat, one streamed model answer with no tools offered (CONTRACT.md,
"Modes"). The run's `Context.offer_tools` is off, which the graph's NoTools middleware reads;
the question and the answer are the shared ones (agent/runs/question.py, agent/runs/answer.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from agent.documents import PreparedAttachments
from agent.errors import Code
from agent.runs import answer
from agent.runs.question import attachments_of, new_message
from agent.runs.result import Question, RunResult, ThreadWrite
from agent.runs.state import Run
from agent.runs.supersede import Superseded


class NoneRun:
    """One answer from the model alone to a new message (a `RunKind`)."""

    supersedes_at_once = False
    out_of_time = answer.OUT_OF_TIME

    def __init__(self) -> None:
        self.attachments: PreparedAttachments | None = None
        self.question: Question | None = None
        self.closing: ThreadWrite | None = None  # what a stopped answer leaves for the thread

    async def check(self, run: Run) -> None:
        self.attachments = await attachments_of(run)

    async def prepare(self, run: Run, superseded: Superseded | None) -> None:
        assert superseded is not None and self.attachments is not None, "a new message"
        run.context = dataclasses.replace(run.context, offer_tools=False)
        self.question = await new_message(run, superseded, self.attachments)

    async def execute(self, run: Run) -> None:
        graph_input: dict[str, Any] = self.question.graph_input() if self.question else {}
        await answer.answer(run, graph_input)

    def deadline_s(self, run: Run) -> float:
        return answer.deadline_s(run.settings)

    async def stop(self, run: Run, reason: Code) -> None:
        # whatever the reason: a stopped answer leaves no open call
        self.closing = await answer.close_open_calls(run, self.question)

    def result(self, run: Run) -> RunResult:
        return RunResult(
            thread=() if self.closing is None else (self.closing,), row=run.show.record()
        )
