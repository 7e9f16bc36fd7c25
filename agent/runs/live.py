"""The runs this process owns, by conversation: what `attach` and `stop` reach.

A run belongs to its conversation, not to the connection that started it (CONTRACT.md, "Runs
outlive the page"): its task is kept here, not by the Gradio job that started it, so a viewer
that goes away (a reload, a closed tab, a lost network) leaves it running to its end. The
registry costs a run nothing while nobody watches: viewers read the run's own `Turn`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from agent.hooks import RunHooks, RunInfo
from agent.stream import Turn


@dataclass(eq=False)
class LiveRun:
    run_id: str
    conversation_id: str
    user_id: str
    turn: Turn
    task: asyncio.Task[Any]
    started_at: float = field(default_factory=time.time)

    def stop(self) -> None:
        """Stop the run as a cancel does: partial text kept, the thread repaired, stored."""
        if not self.task.done():
            self.task.cancel()

    async def ended(self, timeout_s: float) -> bool:
        """Wait until the run has stored its turn; whether it did within `timeout_s`."""
        if not self.turn.finished:
            await asyncio.wait({self.task}, timeout=timeout_s)
        return self.task.done()


class LiveRuns:
    """conversation id -> its live run, for this process."""

    def __init__(self) -> None:
        self._runs: dict[str, LiveRun] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    def keep(self, task: asyncio.Task[Any]) -> None:
        """Hold a run's task until it ends (the event loop keeps only weak references)."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def add(self, run: LiveRun) -> None:
        self._runs[run.conversation_id] = run

    def remove(self, run: LiveRun) -> None:
        if self._runs.get(run.conversation_id) is run:
            del self._runs[run.conversation_id]

    def get(self, conversation_id: str) -> LiveRun | None:
        return self._runs.get(conversation_id)

    def __len__(self) -> int:
        return len(self._runs)


class LiveHook(RunHooks):
    """Registers the run once it holds the lease; unregisters it when it has finished."""

    def __init__(self, info: RunInfo, runs: LiveRuns) -> None:
        super().__init__(info)
        self.runs = runs
        self.live: LiveRun | None = None

    async def started(self, grant: Any) -> None:
        task = asyncio.current_task()
        if task is None or not isinstance(self.info.turn, Turn):
            return
        context = self.info.context
        self.live = LiveRun(
            run_id=self.info.run_id,
            conversation_id=context.conversation_id,
            user_id=context.user_id,
            turn=self.info.turn,
            task=task,
        )
        self.runs.add(self.live)

    def finished(self, outcome: Any, messages: Any) -> None:
        if self.live is not None:
            self.runs.remove(self.live)
