"""The schedules' queue on Postgres (procrastinate): due firings claimed by one periodic tick
across every replica, each firing and each delivery a job run by exactly one worker, at most
`schedules.concurrency` at once per process; firings whose worker died are ended
`RUN_INTERRUPTED`. Every backend replica runs one worker; they share the database's queue."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from typing import Any

import procrastinate
from procrastinate import exceptions as procrastinate_errors
from procrastinate.jobs import Status
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from backend.config import Settings
from backend.db import sync_url
from backend.schedules import deliveries, due, firing, timing
from backend.schedules.backoff import Backoff

log = logging.getLogger("backend.schedules")
FIRE = "schedules.fire"
DELIVER = "schedules.deliver"
TICK = "schedules.tick"
_RETRY_FIRST_S = 1.0
_RETRY_MAX_S = 30.0


def _conninfo(database_url: str) -> str:
    return sync_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)


class ScheduleQueue:
    """The procrastinate app of one backend process, its tasks and its worker."""

    def __init__(self, settings: Settings, factory: async_sessionmaker[AsyncSession]) -> None:
        self.settings = settings
        self.factory = factory
        connector = procrastinate.PsycopgConnector(
            conninfo=_conninfo(settings.database_url or ""), min_size=1, max_size=4
        )
        self.app = procrastinate.App(connector=connector)
        self._worker: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._register()

    def _register(self) -> None:
        tick_s = self.settings.schedules.tick_s
        # croniter's sixth field is seconds: one tick every tick_s, deferred once across workers
        cron = f"* * * * * */{tick_s}"

        @self.app.periodic(cron=cron, periodic_id="due")
        @self.app.task(name=TICK, pass_context=True, queueing_lock=TICK)
        async def tick(context: procrastinate.JobContext, timestamp: int) -> None:
            del context, timestamp
            await self.tick()

        @self.app.task(name=FIRE, pass_context=True)
        async def fire(context: procrastinate.JobContext, run_id: str) -> None:
            assert context.job.id is not None
            ended = await firing.execute(
                factory=self.factory,
                settings=self.settings,
                run_id=uuid.UUID(run_id),
                job_id=context.job.id,
            )
            for delivery_id in ended.delivery_ids if ended else []:
                await self.launch_delivery(delivery_id)

        @self.app.task(
            name=DELIVER, pass_context=True, retry=Backoff(self.settings.schedules.retry_delays_s)
        )
        async def deliver(context: procrastinate.JobContext, delivery_id: int) -> None:
            del context
            await deliveries.attempt(self.factory, self.settings, delivery_id)

        self.fire_task = fire
        self.deliver_task = deliver

    async def launch(self, run_id: uuid.UUID, schedule_id: uuid.UUID) -> None:
        """Queue the firing of a run whose row is committed (once: a second launch is a no-op);
        one schedule's firings run one after the other (its conversation takes one turn)."""
        deferrer = self.fire_task.configure(
            queueing_lock=f"run:{run_id}", lock=f"schedule:{schedule_id}"
        )
        if not self.ready:  # the next tick once the queue is open launches the committed run
            log.warning("schedules queue not open yet; run %s waits for the next tick", run_id)
            return
        with contextlib.suppress(procrastinate_errors.AlreadyEnqueued):
            await deferrer.defer_async(run_id=str(run_id))

    async def launch_delivery(self, delivery_id: int) -> None:
        """Queue a delivery's attempts (once: a second launch while it waits is a no-op)."""
        deferrer = self.deliver_task.configure(queueing_lock=f"delivery:{delivery_id}")
        if not self.ready:  # a stranded delivery is launched by the next tick
            return
        with contextlib.suppress(procrastinate_errors.AlreadyEnqueued):
            await deferrer.defer_async(delivery_id=delivery_id)

    async def tick(self) -> None:
        """Claim every due schedule (once, whichever worker ticks), end the firings whose
        worker died, and queue what is due."""
        await self._interrupt_stalled()
        for run_id, schedule_id in await due.claim_due(self.factory, self.settings):
            await self.launch(run_id, schedule_id)
        for run_id, schedule_id in await due.unlaunched(self.factory):
            await self.launch(run_id, schedule_id)
        for delivery_id in await due.stranded_deliveries(self.factory):
            await self.launch_delivery(delivery_id)

    async def _interrupt_stalled(self) -> None:
        """Jobs whose worker stopped sending heartbeats: a firing is ended RUN_INTERRUPTED
        (never run twice), a delivery tried again, a tick dropped."""
        manager = self.app.job_manager
        stalled = await manager.get_stalled_jobs(seconds_since_heartbeat=self._stalled_after())
        for job in stalled:
            if job.id is None:
                continue
            if job.task_name == DELIVER:
                await manager.retry_job_by_id_async(job_id=job.id, retry_at=timing.now())
                continue
            if job.task_name == FIRE:
                await due.interrupt(self.factory, job.id)
            await manager.finish_job_by_id_async(
                job_id=job.id, status=Status.FAILED, delete_job=False
            )

    def _stalled_after(self) -> float:
        return float(max(3 * self.settings.schedules.tick_s, 15))

    async def start(self, *, worker: bool) -> None:
        """Start in the background: the queue's pool is opened (and the worker run) once the
        database answers, retried while it is away, so start-up never waits on it."""
        self._worker = asyncio.create_task(self._serve(worker=worker), name="schedules-queue")

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    async def _serve(self, *, worker: bool) -> None:
        delay = _RETRY_FIRST_S
        while True:
            try:
                await self.app.open_async()
                self._ready.set()
                delay = _RETRY_FIRST_S
                if not worker:
                    return
                await self._run_worker()
            except Exception as error:  # whatever the database did: try again
                log.warning("schedules queue unavailable, retrying in %.0f s: %s", delay, error)
            self._ready.clear()
            await self._close_pool()
            await asyncio.sleep(delay)
            delay = min(delay * 2, _RETRY_MAX_S)

    async def _close_pool(self) -> None:
        # also forgets a pool whose opening timed out, so the next try opens a new one
        with contextlib.suppress(procrastinate_errors.ProcrastinateException, OSError):
            await self.app.close_async()

    async def _run_worker(self) -> None:
        options: dict[str, Any] = {
            "concurrency": self.settings.schedules.concurrency,
            "name": f"backend-{os.getpid()}",
            "install_signal_handlers": False,
            "update_heartbeat_interval": 2.0,
            "stalled_worker_timeout": self._stalled_after(),
            "fetch_job_polling_interval": 1.0,
            "delete_jobs": "successful",
        }
        await self.app.run_worker_async(**options)

    async def stop(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
        self._ready.clear()
        await self._close_pool()
