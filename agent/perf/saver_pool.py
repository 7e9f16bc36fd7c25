"""The Postgres checkpointer's cursors taken from its pool without the saver's process-wide lock.

Saves: the queue every run's checkpoint reads and writes stood in behind every other run's. The
library takes one asyncio.Lock around each of them, which a single shared connection needs; on a
pool it serialises them (at 25 streams the first token waited on the others' writes).
Bench: `uv run python bench/agent_ttft.py --levels 1,10,25 --rounds 3` (first token at 25).
Remove when: `AsyncPostgresSaver` stops locking a pooled connection, or when the pin's upper bound
(pyproject.toml, `langgraph-checkpoint-postgres`) has to move and
tests/agent/unit/test_perf_tricks.py no longer finds what this overrides (`_cursor(pipeline=)`,
the saver's `conn`, `pipe` and `supports_pipeline`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
import psycopg_pool
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.rows import DictRow, dict_row


class PoolCursor(AsyncPostgresSaver):
    """AsyncPostgresSaver whose reads and writes run side by side on its pool."""

    @asynccontextmanager
    async def _cursor(
        self, *, pipeline: bool = False
    ) -> AsyncIterator[psycopg.AsyncCursor[DictRow]]:
        """A cursor on a connection of the pool's own, without the saver's lock (see module)."""
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
