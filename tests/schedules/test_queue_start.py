"""The schedules' queue never holds the backend's start-up on its database: started while
Postgres is unreachable it returns at once, opens in the background once the database answers,
and stops cleanly either way."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time

from sqlalchemy.engine import make_url

from backend import db
from backend.config import Settings
from backend.schedules.queue import ScheduleQueue
from tests.support.processes import free_port


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()


async def _forward_to(host: str, port: int, listen: int) -> asyncio.Server:
    """A TCP door on `listen` to the real Postgres: the database "comes back" when it opens."""

    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(host, port)
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    return await asyncio.start_server(relay, "127.0.0.1", listen)


def _queue(port: int) -> ScheduleQueue:
    real = make_url(os.environ["TEST_DATABASE_URL"])
    url = real.set(host="127.0.0.1", port=port).render_as_string(hide_password=False)
    settings = Settings(database_url=url)
    return ScheduleQueue(settings, db.session_factory(db.create_engine(url)))


async def test_start_returns_at_once_and_the_queue_opens_when_the_database_comes_back():
    real = make_url(os.environ["TEST_DATABASE_URL"])
    port = free_port()
    queue = _queue(port)
    began = time.monotonic()
    await queue.start(worker=False)  # the worker would take other tests' jobs
    assert time.monotonic() - began < 1
    await asyncio.sleep(2)
    assert not queue.ready  # nothing listens yet: still retrying, not crashed

    door = await _forward_to(real.host or "127.0.0.1", real.port or 5432, port)
    try:
        deadline = time.monotonic() + 30
        while not queue.ready and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert queue.ready
    finally:
        began = time.monotonic()
        await queue.stop()
        assert time.monotonic() - began < 5 and not queue.ready
        door.close()


async def test_a_queue_whose_database_never_answers_stops_promptly():
    queue = _queue(free_port())
    await queue.start(worker=True)
    await asyncio.sleep(1.5)
    began = time.monotonic()
    await queue.stop()
    assert time.monotonic() - began < 5 and not queue.ready
