"""The checkpointer of the agent process: AsyncPostgresSaver that rides out a database restart.

A restarted Postgres cuts every pooled connection. A checkpoint read or write that finds its
connection lost checks the pool's idle connections once (replacing the cut ones) and is retried
for a few seconds, so a restart in the middle of a turn costs a pause, not the turn; a healthy
call pays nothing for it (no check query per checkout: a turn makes a dozen of them). Retrying
is safe: the saver's writes are upserts keyed by thread, checkpoint and task (the same write
twice stores one row). A database that stays away longer ends the turn with `StoreUnavailable`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import psycopg
import psycopg_pool
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_delay, wait_exponential

from agent.errors import Unavailable
from agent.perf.delta_replay import RememberedHistories
from agent.perf.saver_pool import PoolCursor

RETRY_S = 15.0  # a fast restart takes 1-3 s; a failover a few more
LOST = (psycopg.OperationalError, psycopg_pool.PoolTimeout)
T = TypeVar("T")


class StoreUnavailable(Unavailable):
    """The checkpoint database did not come back within RETRY_S."""

    def __init__(self, reason: str = "") -> None:
        super().__init__("The conversation store is not answering; try again.")
        self.reason = reason


async def _retry(call: Callable[[], Awaitable[T]], pool: Any = None) -> T:
    try:
        return await call()  # the fast path: no retry machinery on a healthy connection
    except LOST:
        if isinstance(pool, psycopg_pool.AsyncConnectionPool):
            await pool.check()  # drop every connection the restart cut, not one per attempt
    retrying = AsyncRetrying(
        stop=stop_after_delay(RETRY_S),
        wait=wait_exponential(multiplier=0.2, max=2),
        retry=retry_if_exception_type(LOST),
        reraise=True,
    )

    async def attempt() -> T:
        return await call()

    try:
        return await retrying(attempt)
    except LOST as exc:
        raise StoreUnavailable("the conversation store is unreachable") from exc


class DurableSaver(RememberedHistories, PoolCursor):
    """AsyncPostgresSaver whose reads and writes wait out a lost connection (see module); the
    performance tricks under it (agent/perf/) run them side by side on its pool and read
    delta-stored messages incrementally."""

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await _retry(lambda: super(DurableSaver, self).aget_tuple(config), self.conn)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """What a DeltaChannel replays (agent/perf/delta_state.py), from what this saver last
        read of the thread when it can (agent/perf/delta_replay.py)."""
        return await _retry(
            lambda: super(DurableSaver, self).aget_delta_channel_history(
                config=config, channels=channels
            ),
            self.conn,
        )

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await _retry(
            lambda: super(DurableSaver, self).aput(config, checkpoint, metadata, new_versions),
            self.conn,
        )

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await _retry(
            lambda: super(DurableSaver, self).aput_writes(config, writes, task_id, task_path),
            self.conn,
        )
