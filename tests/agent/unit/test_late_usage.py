"""A run's end that finds no backend for its whole wait (every backend restarting at once, as
the chaos soak saw on a loaded machine) leaves its usage to a resend in the background, so no
model call goes uncounted; a refused end (a 4xx) is not sent again. No processes: a fake
backend client answers the end."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent import lease, writes
from agent.backend_client import BackendError
from agent.context import Context

CONTEXT = Context(
    user_token="jwt", user_id="1", username="admin", roles=("admin",), conversation_id="c-1"
)
USAGE = [{"key": "run-1:a", "input_tokens": 3, "output_tokens": 2}]
END = {"message": {"role": "assistant", "content": "Done."}, "usage": USAGE, "holder": "h"}


class Backend:
    """Down (502) for its first `down` requests, then answers; or refuses with `refuse`."""

    def __init__(self, down: int, refuse: int | None = None) -> None:
        self.down, self.refuse = down, refuse
        self.bodies: list[dict[str, Any]] = []

    async def call(self, context: Context, method: str, path: str, **kwargs: Any) -> Any:
        self.bodies.append(kwargs["json"])
        if self.refuse is not None:
            raise BackendError(self.refuse, "INVALID_INPUT", "refused")
        if len(self.bodies) <= self.down:
            raise BackendError(502, "BACKEND_ERROR", "Backend request failed")
        return {"recorded": len(kwargs["json"].get("usage", []))}


@pytest.fixture(autouse=True)
def short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writes, "WAIT_S", 0.5)
    monkeypatch.setattr(writes, "FIRST_WAIT_S", 0.01)
    monkeypatch.setattr(lease, "USAGE_LATE_S", 5.0)


async def _settled() -> None:
    while lease._LATE:
        await asyncio.gather(*lease._LATE)


async def test_an_end_that_found_no_backend_sends_its_usage_alone_later() -> None:
    backend = Backend(down=10**6)
    answer = await lease.end_run(backend, CONTEXT, END)  # type: ignore[arg-type]
    assert answer == {}
    tried = len(backend.bodies)
    assert tried >= 2 and all(b == END for b in backend.bodies)  # the end, retried, in vain
    assert len(lease._LATE) == 1
    backend.down = tried + 3  # the backends come back after three more refusals
    await _settled()
    late = backend.bodies[tried:]
    assert len(late) == 4 and all(b == {"usage": USAGE} for b in late)  # the usage alone


async def test_a_refused_end_is_not_sent_again() -> None:
    backend = Backend(down=0, refuse=422)
    assert await lease.end_run(backend, CONTEXT, END) == {}  # type: ignore[arg-type]
    assert not lease._LATE and len(backend.bodies) == 1


async def test_an_end_without_usage_leaves_nothing_behind() -> None:
    backend = Backend(down=10**6)
    body = {"message": END["message"], "holder": "h"}
    assert await lease.end_run(backend, CONTEXT, body) == {}  # type: ignore[arg-type]
    assert not lease._LATE
