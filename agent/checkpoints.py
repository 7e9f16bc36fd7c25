"""The checkpointer of the agent process: AsyncPostgresSaver that rides out a database restart.

A restarted Postgres cuts every pooled connection. A checkpoint read or write that finds its
connection lost checks the pool's idle connections once (replacing the cut ones) and is retried
for a few seconds, so a restart in the middle of a turn costs a pause, not the turn; a healthy
call pays nothing for it (no check query per checkout: a turn makes a dozen of them). Retrying
is safe: the saver's writes are upserts keyed by thread, checkpoint and task (the same write
twice stores one row). A database that stays away longer ends the turn with `StoreUnavailable`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
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
    get_checkpoint_id,
)
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.rows import DictRow, dict_row
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_delay, wait_exponential

from agent.errors import Unavailable
from agent.replay import Histories

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


class DurableSaver(AsyncPostgresSaver):
    """AsyncPostgresSaver whose reads and writes wait out a lost connection (see module), that
    runs them side by side on its pool, and that reads delta-stored messages incrementally."""

    histories: Histories

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.histories = Histories()

    @asynccontextmanager
    async def _cursor(
        self, *, pipeline: bool = False
    ) -> AsyncIterator[psycopg.AsyncCursor[DictRow]]:
        """A cursor on a connection of the pool's own, without the saver's process-wide lock.

        The library takes one asyncio.Lock around every read and write, which a single shared
        connection needs; on a pool it queues every run's checkpoints behind every other run's
        (at 25 streams the first token waited on the others' writes).
        """
        if not isinstance(self.conn, psycopg_pool.AsyncConnectionPool) or self.pipe:
            async with super()._cursor(pipeline=pipeline) as cur:
                yield cur
            return
        async with self.conn.connection() as conn:
            if not pipeline:
                async with conn.cursor(binary=True, row_factory=dict_row) as cur:
                    yield cur
            elif self.supports_pipeline:
                async with conn.pipeline(), conn.cursor(binary=True, row_factory=dict_row) as cur:
                    yield cur
            else:
                async with (
                    conn.transaction(),
                    conn.cursor(binary=True, row_factory=dict_row) as cur,
                ):
                    yield cur

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await _retry(lambda: super(DurableSaver, self).aget_tuple(config), self.conn)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """What a DeltaChannel replays (agent/state.py), from what this saver last read of the
        thread when it can (agent/replay.py), else as the library reads it."""
        return await _retry(lambda: self._delta_history(config, channels), self.conn)

    async def _delta_history(
        self, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        target = get_checkpoint_id(config)
        thread_id = str(config["configurable"]["thread_id"])
        ns = str(config["configurable"].get("checkpoint_ns", ""))
        if target is not None:
            async with self._cursor() as cur:
                known = await self.histories.read(
                    cur, self.serde, thread_id=thread_id, ns=ns, target=target, channels=channels
                )
            if known is not None:
                return known
        read = await super().aget_delta_channel_history(config=config, channels=channels)
        if target is not None:
            for ch, history in read.items():
                self.histories.remember((thread_id, ns, ch), target, history)
        return read

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
