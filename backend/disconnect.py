"""Stop work whose client has gone: a request's handler is not cancelled by the server when its
client disconnects, so a long query would run on for nobody until its timeout."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any, TypeVar

from starlette.requests import Request

from backend.codes import Code
from backend.errors import AppError

T = TypeVar("T")


class ClientGone(AppError):
    """The client closed the connection before the answer (nginx's 499); nobody reads this."""

    status_code = 499
    code = Code.CLIENT_CLOSED_REQUEST


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def unless_disconnected(request: Request, work: Coroutine[Any, Any, T]) -> T:
    """Await `work`; cancel it (and raise ClientGone) once the client disconnects.

    Call it after the request body was read (FastAPI has, for a body parameter): the next
    ASGI message is then the disconnect.
    """
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        gone.cancel()
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task  # let it clean up: cancel the statement, write its audit row
        raise ClientGone("The client closed the request")
    return task.result()
