"""The BackendClient over its aiohttp transport, against raw sockets that misbehave: what a
request that got no answer means decides whether a write may be sent again (never sent), is
retried with its key (sent, answer lost) or is a timeout, so each must stay what it was with
httpx's own transport. No processes: an asyncio server per test."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from agent.backend_client import BackendClient, BackendError, BackendUnreachable
from agent.config import Settings

Handler = Callable[[int, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
TOKEN = json.dumps({"access_token": "service-jwt", "expires_in": 3600}).encode()


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    await reader.readexactly(length)
    return head


async def _answer(writer: asyncio.StreamWriter, body: bytes) -> None:
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        + f"content-length: {len(body)}\r\n\r\n".encode()
        + body
    )
    await writer.drain()


@asynccontextmanager
async def backend(handler: Handler) -> AsyncIterator[str]:
    """A server on a free port: the service token is granted, every other request goes to
    `handler` with the number of requests before it."""
    seen = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal seen
        try:
            while True:
                head = await _read_request(reader)
                if b"/api/auth/service-token" in head.split(b"\r\n")[0]:
                    await _answer(writer, TOKEN)
                    continue
                seen += 1
                await handler(seen, reader, writer)
                if writer.is_closing():
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()


async def _send(url: str, method: str, *, timeout: float | None = None) -> object:
    client = BackendClient(Settings(backend_url=url))
    try:
        return await client.request(method, "/api/x", user_token="user-jwt", timeout=timeout)
    finally:
        await client.aclose()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_backend_that_is_not_there_is_unreachable_so_a_write_may_go_again() -> None:
    with pytest.raises(BackendUnreachable) as refused:
        await _send(f"http://127.0.0.1:{_closed_port()}", "POST")
    assert refused.value.status == 503 and refused.value.code == "BACKEND_UNAVAILABLE"


async def test_a_write_whose_answer_is_lost_is_not_unreachable() -> None:
    # sent, then the connection closed: it may have run, so only its key may send it again
    async def hang_up(_n: int, _r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    async with backend(hang_up) as url:
        with pytest.raises(BackendError) as lost:
            await _send(url, "POST")
    assert not isinstance(lost.value, BackendUnreachable)
    assert (lost.value.status, lost.value.code) == (503, "BACKEND_UNAVAILABLE")


async def test_a_backend_that_does_not_answer_in_time_is_a_timeout() -> None:
    async def silent(_n: int, _r: asyncio.StreamReader, _w: asyncio.StreamWriter) -> None:
        await asyncio.sleep(5)

    async with backend(silent) as url:
        with pytest.raises(BackendError) as late:
            await _send(url, "POST", timeout=0.3)
    assert (late.value.status, late.value.code) == (504, "BACKEND_TIMEOUT")


async def test_a_read_whose_answer_was_lost_is_sent_again_and_answered() -> None:
    async def once_lost(n: int, _r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if n == 1:
            writer.close()
        else:
            await _answer(writer, b'{"items": [1]}')

    async with backend(once_lost) as url:
        assert await _send(url, "GET") == {"items": [1]}
