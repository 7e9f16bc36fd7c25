"""A sweep over every thread that has more checkpoints than it keeps, or has been idle past
the TTL, and the periodic job that runs it in each backend process.

Every replica runs the job; a session-level advisory lock lets one sweep at a time, and a
replica that finds it taken skips its turn (it does not wait). A process that dies mid-sweep
loses its connection and with it the lock.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import socket
from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from backend.config import RetentionSettings
from backend.retention import thread
from backend.retention.thread import Outcome

log = logging.getLogger(__name__)

# pg_advisory_lock key of the sweep (b"ckptkeep" as a signed 64-bit integer).
LOCK_KEY = int.from_bytes(b"ckptkeep", "big", signed=True)

# Threads of live conversations that keep more than `keep_latest` checkpoints per namespace,
# or whose latest checkpoint is older than the TTL; by thread id, after the last one seen.
CANDIDATES = text("""
SELECT c.thread_id
FROM checkpoints c
JOIN agent_conversations a ON a.id::text = c.thread_id
WHERE c.thread_id > :after
GROUP BY c.thread_id
HAVING count(*) > :keep * count(DISTINCT c.checkpoint_ns)
    OR (:ttl > 0 AND max((c.checkpoint ->> 'ts')::timestamptz)
        FILTER (WHERE c.checkpoint_ns = '') < now() - make_interval(secs => :ttl))
ORDER BY c.thread_id
LIMIT :batch
""")


VACUUM = "VACUUM (ANALYZE) checkpoints, checkpoint_blobs, checkpoint_writes"


@dataclass
class SweepReport:
    """One sweep: whether it ran (False: another process was sweeping), and what it did."""

    ran: bool
    threads: Counter[str] = field(default_factory=Counter)  # by Outcome.action
    checkpoints: int = 0
    blobs: int = 0
    writes: int = 0
    vacuumed: bool = False

    def add(self, outcome: Outcome) -> None:
        self.threads[outcome.action] += 1
        self.checkpoints += outcome.checkpoints
        self.blobs += outcome.blobs
        self.writes += outcome.writes

    def as_dict(self) -> dict[str, object]:
        return {
            "ran": self.ran,
            "threads": dict(self.threads),
            "checkpoints_deleted": self.checkpoints,
            "blobs_deleted": self.blobs,
            "writes_deleted": self.writes,
            "vacuumed": self.vacuumed,
        }


def holder_name() -> str:
    """The lease holder a sweep of this process writes while it has a thread."""
    return f"retention:{socket.gethostname()}:{os.getpid()}"[:128]


async def sweep(engine: AsyncEngine, settings: RetentionSettings) -> SweepReport:
    """Run one sweep unless another process is running one."""
    async with engine.connect() as base:
        conn = await base.execution_options(isolation_level="REPEATABLE READ")
        locked = await conn.scalar(text("SELECT pg_try_advisory_lock(:k)"), {"k": LOCK_KEY})
        await conn.commit()
        if not locked:
            return SweepReport(ran=False)
        try:
            report = await _sweep_locked(conn, settings)
            if settings.vacuum and (report.checkpoints or report.blobs or report.writes):
                await _vacuum(engine)
                report.vacuumed = True
            return report
        finally:
            await _unlock(conn)


async def _vacuum(engine: AsyncEngine) -> None:
    """Make the deleted rows' space (TOASTed blobs above all) reusable now rather than when
    autovacuum's thresholds are next crossed; plain VACUUM blocks no reader or writer."""
    async with engine.connect() as base:
        conn = await base.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text(VACUUM))


async def _unlock(conn: AsyncConnection) -> None:
    # A pooled connection must not keep the lock: if the unlock fails, the connection goes.
    try:
        await conn.rollback()
        await conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": LOCK_KEY})
        await conn.commit()
    except (SQLAlchemyError, OSError, asyncio.CancelledError):
        await conn.invalidate()
        raise


async def _sweep_locked(conn: AsyncConnection, settings: RetentionSettings) -> SweepReport:
    report = SweepReport(ran=True)
    tables = await conn.scalar(text("SELECT to_regclass('checkpoints') IS NOT NULL"))
    await conn.commit()
    if not tables:  # no agent has started on this database yet
        return report
    holder = holder_name()
    after = ""
    while True:
        params = {
            "after": after,
            "keep": settings.keep_latest,
            "ttl": settings.idle_ttl_s,
            "batch": settings.batch_size,
        }
        batch = list(await conn.scalars(CANDIDATES, params))
        await conn.commit()
        for thread_id in batch:
            outcome = await thread.apply(
                conn,
                thread_id=thread_id,
                keep_latest=settings.keep_latest,
                idle_ttl_s=settings.idle_ttl_s,
                holder=holder,
                lock_timeout_s=settings.lock_timeout_s,
            )
            report.add(outcome)
        if len(batch) < settings.batch_size:
            return report
        after = batch[-1]


async def run_periodically(engine: AsyncEngine, settings: RetentionSettings) -> None:
    """Sweep every `interval_s`, the first time after a random part of it (so that replicas
    started together do not all try at once); a failed sweep is logged and tried again."""
    await asyncio.sleep(random.uniform(0, settings.interval_s))
    while True:
        try:
            report = await sweep(engine, settings)
        except (SQLAlchemyError, OSError) as exc:
            log.warning("checkpoint retention sweep failed: %s", exc)
        else:
            if report.ran and (report.checkpoints or report.blobs or report.writes):
                log.info("checkpoint retention: %s", report.as_dict())
        await asyncio.sleep(settings.interval_s)
