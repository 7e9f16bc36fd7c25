"""`attach` on a replica that does not own the run (agent/runs/viewers.py), without processes:
a fake backend answers the lease, the owner is a port nobody listens on. A viewer never ends
with nothing shown: the chaos soak (issue 37) found a re-attach that ended empty when the owner
went away after its run had ended."""

from __future__ import annotations

import socket
from typing import Any

from agent.backend_client import BackendError
from agent.context import Context
from agent.errors import Code
from agent.runs.live import LiveRuns
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


async def _attach(leases: Leases) -> list[list[dict[str, Any]]]:
    viewers = Viewers(runs=LiveRuns(), client=leases, own_url="http://127.0.0.1:1", lease_ttl_s=0.5)  # type: ignore[arg-type]
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
    monkeypatch: Any,
) -> None:
    # The supervisor started the owner again on its port: the new process has no such run
    # (404), the lease still names the dead one's run. Not "no answer is running".
    import httpx

    from agent.runs import viewers as module
    from agent.runs.takeover import Holder

    async def dead(lease: dict[str, Any]) -> Holder:
        return Holder.DEAD

    monkeypatch.setattr(module, "holder_state", dead)
    held = {"run_id": "r1", "owner_url": "http://127.0.0.1:9", "expired": False}
    viewers = Viewers(runs=LiveRuns(), client=Leases(held, held), own_url=None, lease_ttl_s=10)  # type: ignore[arg-type]
    viewers._http = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(404)))
    try:
        values = [value async for value in viewers.attach(_context())]
    finally:
        await viewers.aclose()

    assert _codes(values) == [("error", Code.RUN_INTERRUPTED)]


async def test_an_owner_whose_run_just_ended_answers_404_and_the_viewer_is_told_so() -> None:
    import httpx

    held = {"run_id": "r1", "owner_url": "http://127.0.0.1:9", "expired": False}
    viewers = Viewers(runs=LiveRuns(), client=Leases(held), own_url=None, lease_ttl_s=10)  # type: ignore[arg-type]
    viewers._http = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(404)))
    try:
        values = [value async for value in viewers.attach(_context())]
    finally:
        await viewers.aclose()

    assert _codes(values) == [("notice", Code.NO_ACTIVE_RUN)]
