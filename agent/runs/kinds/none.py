"""Mode `none`: plain chat, one streamed model answer with no tools offered (CONTRACT.md,
"Modes"). The run's `Context.offer_tools` is off, which the graph's NoTools middleware reads;
the question and the answer are the shared ones (agent/runs/question.py, agent/runs/answer.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from agent.errors import Code
from agent.runs.answer import answer, close_open_calls
from agent.runs.question import new_message
from agent.runs.state import Run


class NoneRun:
    """One answer from the model alone (a `RunKind`)."""

    links_row = False
    out_of_time = "This request ran out of time."

    def __init__(self) -> None:
        self.graph_input: dict[str, Any] = {}

    async def prepare(self, run: Run) -> None:
        run.context = dataclasses.replace(run.context, offer_tools=False)
        snapshot = await run.agent.aget_state(run.config)
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
