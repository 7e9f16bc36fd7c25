"""Workflow and diagnosis runs stop on lease loss as the dynamic run does: the stream's error is
CONVERSATION_BUSY, the writes queued before it are stored (awaited, not left pending), no
assistant row is written and the thread is left to the run that took it. No processes: a fake
lease, a fake backend and a scripted model drive the run skeleton itself."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.types import StateSnapshot

from agent.backend_client import BackendError
from agent.config import Settings
from agent.context import Context
from agent.errors import AgentError, Code
from agent.inputs import Options, Submit
from agent.lease import Lease
from agent.runs.kinds.diagnose import DiagnosisChat
from agent.runs.kinds.workflow import WorkflowRun
from agent.runs.skeleton import Run, RunKind, Services, drive
from agent.stream import Turn
from agent.workflows.definitions import Definition, LlmStep

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


def _run(backend: FakeBackend, agent: FakeAgent, lease: FakeLease, *, mode: str, model: Any) -> Run:
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
    return Run(services, turn=turn, context=context, submit=submit, lease=lease)  # type: ignore[arg-type]


async def _drive(run: Run, kind: RunKind) -> AgentError:
    async def route(_: Run) -> RunKind:
        return kind

    with pytest.raises(AgentError) as stopped:
        await drive(run, route)
    return stopped.value


async def test_a_workflow_run_stops_at_the_next_step_once_its_lease_is_lost() -> None:
    backend, agent = FakeBackend(), FakeAgent()
    steps = lambda: backend.paths("PUT", r"/steps/0$")  # noqa: E731
    lease = FakeLease(lambda: any(b.get("status") == "completed" for b in steps()))
    model = GenericFakeChatModel(messages=iter([AIMessage("one"), AIMessage("two")]))
    run = _run(backend, agent, lease, mode="yaml", model=model)
    definition = Definition(
        name="check",
        description="",
        trigger_keywords=(),
        steps=(
            LlmStep(name="first", type="llm_call", prompt="one"),
            LlmStep(name="second", type="llm_call", prompt="two"),
        ),
        final_answer="{{ steps.second.text }}",
    )

    error = await _drive(run, WorkflowRun(definition=definition))

    assert error.code == Code.CONVERSATION_BUSY
    assert not backend.paths("PUT", r"/steps/1$")  # the second step never started
    assert [b["role"] for b in backend.paths("POST", r"/messages$")] == ["user"]  # awaited
    assert backend.paths("PATCH", r"/executions/7$")[-1]["status"] == "cancelled"
    assert agent.updates == []  # the thread belongs to the run that took the lease
    assert run.ending == {}  # no answer row or debug record left for the run's end to store


async def test_a_diagnosis_run_stops_before_its_next_round_once_its_lease_is_lost() -> None:
    backend, agent = FakeBackend(), FakeAgent()
    model = ToolModel(messages=iter([AIMessage("never asked")]))
    run = _run(backend, agent, FakeLease(lambda: True), mode="diagnose", model=model)

    error = await _drive(run, DiagnosisChat())

    assert error.code == Code.CONVERSATION_BUSY
    assert [b["role"] for b in backend.paths("POST", r"/messages$")] == ["user"]  # awaited
    assert agent.updates == []
    assert not [e for e in run.turn.entries if e.metadata.get("type") == "diagnosis"]


async def test_a_bad_file_after_a_queued_write_still_stores_that_write() -> None:
    """The rejection a workflow queues before it reads the files is stored, not left pending
    (a coroutine never awaited), when a file is refused."""
    backend, agent = FakeBackend(), FakeAgent()
    run = _run(backend, agent, FakeLease(), mode="yaml", model=None)
    run.append_later("assistant", "rejected", {"type": "decision"})
    run.submit = Submit(
        text="x", files=["/etc/passwd"], conversation_id=CID, action="", focus=None, mode="yaml"
    )
    definition = Definition(
        name="d", description="", trigger_keywords=(), steps=(), final_answer="done"
    )

    error = await _drive(run, WorkflowRun(definition=definition))

    assert error.code in (Code.UNSUPPORTED_FILE, Code.INVALID_INPUT)
    assert [b["content"] for b in backend.paths("POST", r"/messages$")] == ["rejected"]


class Renewals(FakeBackend):
    """Grants the lease, then refuses its first renewal: the conversation was archived (409),
    as when a run stalled past its lease."""

    def __init__(self) -> None:
        super().__init__()
        self.puts = 0

    async def call(self, context: Context, method: str, path: str, **kwargs: Any) -> Any:
        if method == "PUT" and path.endswith("/lease"):
            self.puts += 1
            if self.puts > 1:
                raise BackendError(409, Code.CONVERSATION_ARCHIVED, "archived")
        return await super().call(context, method, path, **kwargs)


async def test_a_run_streaming_an_answer_stops_mid_answer_once_its_lease_is_lost() -> None:
    # The answer's tokens reach the turn by callback, with no step of the run's own in
    # between: the lease's loss must end the streaming block itself, not the next step.
    backend, agent = Renewals(), FakeAgent()
    run = _run(backend, agent, FakeLease(), mode="dynamic", model=None)
    run.lease = lease = Lease(backend, run.context, ttl_s=1.0)  # type: ignore[arg-type]
    await lease.acquire()
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        with pytest.raises(AgentError) as stopped:
            async with run.streaming():
                await asyncio.sleep(30)  # a long answer, streaming
    finally:
        await lease.release()
    assert stopped.value.code == Code.CONVERSATION_ARCHIVED
    assert loop.time() - started < 5  # the first renewal, at half the TTL, found it lost
    assert backend.puts == 2


async def test_a_run_streaming_past_its_deadline_times_out_as_before() -> None:
    backend, agent = FakeBackend(), FakeAgent()
    run = _run(backend, agent, FakeLease(), mode="dynamic", model=None)
    run.settings = Settings(agent={"run_deadline_s": 0.1})
    with pytest.raises(TimeoutError):
        async with run.streaming():
            await asyncio.sleep(30)
