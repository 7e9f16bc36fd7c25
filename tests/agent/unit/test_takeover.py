"""How a busy lease's holder is judged (agent/runs/takeover.py), against a real HTTP owner: a
refused connection or another process answering is dead (taken over at once); the holder's
process still renewing it is alive (busy); a holder no longer renewed (its run is ending) is
waited for, as is an owner that cannot say."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agent.lease import PROCESS_ID, RENEWING
from agent.runs.takeover import Holder, holder_state
from tests.support.processes import free_port


@pytest.fixture()
def owner() -> Iterator[dict[str, Any]]:
    """An owner that answers GET /internal/process with what `said` holds."""
    said: dict[str, Any] = {"status": 200, "body": {}}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(said["body"]).encode()
            self.send_response(said["status"])
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    said["url"] = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield said
    finally:
        server.shutdown()
        server.server_close()


def lease(holder: str, owner_url: str | None) -> dict[str, Any]:
    return {"holder": holder, "owner_url": owner_url, "expired": False}


async def test_a_holder_whose_owner_refuses_the_connection_is_dead() -> None:
    gone = f"http://127.0.0.1:{free_port()}"
    assert await holder_state(lease("elsewhere:41:run", gone)) is Holder.DEAD


async def test_another_process_on_the_owners_port_means_the_holder_is_dead(owner) -> None:
    owner["body"] = {"process": "elsewhere:99", "renewing": False}
    assert await holder_state(lease("elsewhere:41:run", owner["url"])) is Holder.DEAD


async def test_the_holders_process_renewing_it_is_alive_and_not_renewing_is_waited_for(owner):
    owner["body"] = {"process": "elsewhere:41", "renewing": True}
    assert await holder_state(lease("elsewhere:41:run", owner["url"])) is Holder.ALIVE
    owner["body"] = {"process": "elsewhere:41", "renewing": False}
    assert await holder_state(lease("elsewhere:41:run", owner["url"])) is Holder.UNKNOWN


async def test_an_owner_that_cannot_say_or_no_owner_is_waited_for(owner) -> None:
    owner["status"] = 404
    assert await holder_state(lease("elsewhere:41:run", owner["url"])) is Holder.UNKNOWN
    assert await holder_state(lease("elsewhere:41:run", None)) is Holder.UNKNOWN


async def test_a_holder_of_this_process_is_alive_only_while_renewed() -> None:
    holder = f"{PROCESS_ID}:abc123"
    RENEWING.add(holder)
    try:
        assert await holder_state(lease(holder, None)) is Holder.ALIVE
    finally:
        RENEWING.discard(holder)
    assert await holder_state(lease(holder, None)) is Holder.UNKNOWN


async def test_an_expired_lease_is_free() -> None:
    assert await holder_state({"holder": "x:1:r", "expired": True}) is Holder.DEAD
