"""A run without processes: a fake backend client (answers as the backend would, keeps the
calls), a fake lease, a fake agent graph (an empty thread; writes kept) and the real `Run` with
its turn and its end (`FakeRun`), for tests of the skeleton and the kinds (test_lease_loss.py,
test_run_skeleton.py)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Iterator
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langgraph.types import StateSnapshot

from agent.config import Settings
from agent.context import Context
from agent.inputs import Options, Submit
from agent.runs.skeleton import End, open_run
from agent.runs.state import Run, Services
from agent.stream import Turn

CID = "00000000-0000-4000-8000-000000000001"


class FakeBackend:
    """Answers the agent's backend calls as the backend would, and keeps them."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.ids = 0

    def current_service_token(self) -> None:
        return None

    async def call(self, context: Context, method: str, path: str, **kwargs: Any) -> Any:
        await asyncio.sleep(0)  # a write takes a turn of the loop, as a real one does
        self.calls.append((method, path, kwargs.get("json")))
        if path.endswith("/messages"):
            self.ids += 1
            return {"id": self.ids, **(kwargs.get("json") or {})}
        if method == "POST" and path.endswith("/end") and (kwargs.get("json") or {}).get("message"):
            return {"message_id": 42}  # the turn's row, stored by the run's end
        if method == "POST" and path == "/api/workflow/executions":
            return {"id": 7}
        if method == "GET" or path.endswith("/cancel-waiting"):
            return {"items": []}
        return {}

    def paths(self, method: str, pattern: str) -> list[Any]:
        return [body for m, p, body in self.calls if m == method and re.search(pattern, p)]


class FakeLease:
    """Lost once `lose()` says so (as a renewal answered 409 would set it)."""

    def __init__(self, lose: Any = lambda: False) -> None:
        self.lose = lose
        self.archived = False
        self.grant: dict[str, Any] = {}

    @property
    def lost(self) -> bool:
        return bool(self.lose())

    def thread_has(self, fact: str) -> bool:
        return True  # as a lease answer that says nothing of the thread

    @contextlib.contextmanager
    def on_loss(self, callback: Any) -> Iterator[None]:
        if self.lost:
            callback()
        yield


class FakeAgent:
    """The compiled agent graph: an empty thread; writes to it are kept."""

    checkpointer = None

    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def aget_state(self, config: Any) -> StateSnapshot:
        return StateSnapshot({}, (), {}, None, None, None, (), ())

    async def aupdate_state(self, config: Any, values: Any, as_node: str | None = None) -> None:
        self.updates.append(values)


class ToolModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


class FakeRun(Run):
    """The real `Run`, with the turn it shows in and its end kept for the test to read."""

    turn: Turn
    end: End


def make_run(
    backend: FakeBackend, agent: FakeAgent, lease: FakeLease, *, mode: str, model: Any
) -> FakeRun:
    services = Services(
        settings=Settings(),
        client=backend,  # type: ignore[arg-type]
        agent=agent,  # type: ignore[arg-type]
        model=model,
        tools={},
    )
    context = Context(
        user_token="user-jwt", user_id="1", username="u", roles=("admin",), conversation_id=CID
    )
    submit = Submit(
        text="Check the service",
        files=[],
        conversation_id=CID,
        action="",
        focus=None,
        options=Options(),
        mode=mode,  # type: ignore[arg-type]
    )
    turn = Turn(thread_id=CID)
    run, end = open_run(services, turn=turn, context=context, submit=submit, lease=lease)  # type: ignore[arg-type]
    run.__class__ = FakeRun
    fake: FakeRun = run  # type: ignore[assignment]
    fake.turn, fake.end = turn, end
    return fake
