"""The turn as a stream: snapshots as it changes, paced (agent/perf/pace.py) so that many
open streams share the process's CPU."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from agent.perf.pace import PACE
from agent.stream.turn import Turn


async def updates(turn: Turn) -> AsyncIterator[list[dict[str, Any]]]:
    """Snapshots of `turn` as it changes, the last always.

    Text is coalesced to at most one snapshot per `PACE.interval()`; a card that starts, ends
    or asks for confirmation is shown at once.
    """
    sent, last = -1, 0.0
    PACE.open += 1
    try:
        while True:
            if turn.version != sent and (turn.entries or turn.finished):
                wait = PACE.interval() - (time.monotonic() - last)
                if sent >= 0 and wait > 0 and not turn.finished and not turn.urgent.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(turn.urgent.wait(), wait)
                turn.urgent.clear()
                sent, last = turn.version, time.monotonic()
                yield turn.snapshot()
                continue
            if turn.finished:
                return
            turn.changed.clear()
            await turn.changed.wait()
    finally:
        PACE.open -= 1
