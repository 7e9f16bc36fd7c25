"""Runs start a few at a time (docs/architecture.md, "Per-turn cost": the start slots).

A run's start is the work before its first model request goes out: the lease, the checkpoint
read, the question's input, the first checkpoint write. Most of it is CPU on this process's one
event loop. When a burst of runs comes in at once (many people press Send together) and all
start together, asyncio interleaves their steps, so every run's first request goes out near the
end of the whole burst's start work: the median first token waits for nearly all of it. Let in a
few at a time, each run's request goes out after its own start and the ones ahead of it: the
median waits for about half, and the last run for what it waited for before.

A run holds its slot until the first of: its first model request goes out (`started()`, called
by the model clients), its first output, its end, or `hold_s` (a start that waits on something
else, a busy lease or a large upload, keeps the others waiting no longer than that).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import AsyncIterator

from agent.telemetry import metrics

_current: contextvars.ContextVar[Ticket | None] = contextvars.ContextVar(
    "agent_chat_admission", default=None
)


class Ticket:
    """One run's slot among the starting runs; `leave()` gives it back (once)."""

    def __init__(self, slots: asyncio.Semaphore | None, hold_s: float) -> None:
        self._slots = slots
        self._timer: asyncio.TimerHandle | None = None
        if slots is not None and hold_s > 0:
            self._timer = asyncio.get_running_loop().call_later(hold_s, self.leave)

    @property
    def held(self) -> bool:
        return self._slots is not None

    def leave(self) -> None:
        if self._slots is None:
            return
        slots, self._slots = self._slots, None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        slots.release()


class Admission:
    """At most `slots` runs of this process starting at once (0: no limit)."""

    def __init__(self, *, slots: int, hold_s: float) -> None:
        self.slots = slots
        self.hold_s = hold_s
        self._free = asyncio.Semaphore(slots) if slots > 0 else None
        self.waiting = 0  # runs waiting for a slot now

    async def _enter(self) -> None:
        if self._free is None:
            return
        self.waiting += 1
        began = time.perf_counter()
        try:
            await self._free.acquire()
        finally:
            self.waiting -= 1
        metrics.START_WAIT.observe(time.perf_counter() - began)

    @contextlib.asynccontextmanager
    async def admit(self) -> AsyncIterator[Ticket]:
        """Wait for a slot; the run's ticket, also the current one for `started()` in the
        run's task and the tasks it starts. The slot is given back by the exit at the latest."""
        await self._enter()
        ticket = Ticket(self._free, self.hold_s)
        token = _current.set(ticket)
        try:
            yield ticket
        finally:
            ticket.leave()
            with contextlib.suppress(ValueError):  # left in another context: it ends with it
                _current.reset(token)


def started() -> None:
    """The current run's first model request is going out: its start is over."""
    ticket = _current.get()
    if ticket is not None:
        ticket.leave()
