"""`attach` on a replica that does not own the run (agent/runs/viewers.py), without processes:
a fake backend answers the lease, the owner is a port nobody listens on. A viewer never ends
with nothing shown: the chaos soak (issue 37) found a re-attach that ended empty when the owner
went away after its run had ended."""

from __future__ import annotations

import socket
from typing import Any

import httpx
import pytest

from agent.backend_client import BackendError
from agent.context import Context
from agent.errors import Code
from agent.runs import viewers as viewers_module
from agent.runs.live import LiveRuns
from agent.runs.takeover import Holder
from agent.runs.viewers import Viewers

CID = "6f1c2a3b-0000-4000-8000-000000000001"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Leases:
    """The backend's lease route: the given answers in turn, then `NO_ACTIVE_RUN`."""

    def __init__(self, *answers: dict[str, Any]) -> None:
        self.answers = list(answers)
        self.calls = 0

    async def call(self, context: Context, method: str, path: str, **_: Any) -> dict[str, Any]:
        assert (method, path) == ("GET", f"/api/agent/conversations/{CID}/lease")
        self.calls += 1
        if self.answers:
            return self.answers.pop(0)
        raise BackendError(404, Code.NO_ACTIVE_RUN, "No active run")


def _context() -> Context:
    return Context(user_token="t", user_id="u1", username="u", roles=["admin"], conversation_id=CID)


async def _attach(
    leases: Leases, *, owner_answers: int | None = None
) -> list[list[dict[str, Any]]]:
    """What a viewer on another replica is shown; the owner answers the relay with the status
    `owner_answers`, or is a port nobody listens on."""
    viewers = Viewers(runs=LiveRuns(), client=leases, own_url="http://127.0.0.1:1", lease_ttl_s=0.5)  # type: ignore[arg-type]
    if owner_answers is not None:
        answer = httpx.Response(owner_answers)
        viewers._http = httpx.AsyncClient(transport=httpx.MockTransport(lambda _: answer))
    try:
        return [value async for value in viewers.attach(_context())]
    finally:
        await viewers.aclose()


def _codes(values: list[list[dict[str, Any]]]) -> list[tuple[str, str]]:
    return [(m["metadata"]["type"], m["metadata"].get("code")) for m in values[-1]]


async def test_an_owner_gone_after_its_run_ended_shows_no_active_run_not_nothing() -> None:
    owner = f"http://127.0.0.1:{_closed_port()}"
    leases = Leases({"run_id": "r1", "owner_url": owner, "expired": False})

    values = await _attach(leases)

    assert values, "the viewer ended with nothing shown"
    assert _codes(values) == [("notice", Code.NO_ACTIVE_RUN)]
    assert leases.calls == 2  # the lease read again: released, so the run had ended


async def test_an_owner_dead_mid_run_ends_its_viewer_with_run_interrupted() -> None:
    owner = f"http://127.0.0.1:{_closed_port()}"
    held = {"run_id": "r1", "owner_url": owner, "expired": False}
    leases = Leases(held, held, {**held, "expired": True})

    values = await _attach(leases)

    assert _codes(values) == [("error", Code.RUN_INTERRUPTED)]


async def test_a_restarted_owner_without_the_run_ends_its_viewer_with_run_interrupted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The supervisor started the owner again on its port: the new process has no such run
    # (404), the lease still names the dead one's run. Not "no answer is running".
    async def dead(lease: dict[str, Any]) -> Holder:
        return Holder.DEAD

    monkeypatch.setattr(viewers_module, "holder_state", dead)
    held = {"run_id": "r1", "owner_url": "http://127.0.0.1:9", "expired": False}

    values = await _attach(Leases(held, held), owner_answers=404)

    assert _codes(values) == [("error", Code.RUN_INTERRUPTED)]


async def test_an_owner_whose_run_just_ended_answers_404_and_the_viewer_is_told_so() -> None:
    held = {"run_id": "r1", "owner_url": "http://127.0.0.1:9", "expired": False}

    values = await _attach(Leases(held), owner_answers=404)  # then the lease is released

    assert _codes(values) == [("notice", Code.NO_ACTIVE_RUN)]
