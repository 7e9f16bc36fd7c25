"""Workflow and diagnosis runs stop on lease loss as the dynamic run does: the stream's error is
CONVERSATION_BUSY, the writes queued before it are stored (awaited, not left pending), no
assistant row is written and the thread is left to the run that took it (a diagnosis shows
itself stopped). No processes: a fake
lease, a fake backend and a scripted model drive the run skeleton itself."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from agent.backend_client import BackendError
from agent.config import Settings
from agent.context import Context
from agent.errors import AgentError, Code
from agent.inputs import Submit
from agent.lease import Lease
from agent.runs.kinds.diagnose import DiagnosisChat
from agent.runs.kinds.workflow import WorkflowRun
from agent.runs.result import ThreadWrite
from agent.runs.skeleton import drive, write_thread
from agent.runs.state import Run, RunKind
from agent.workflows.definitions import Definition, LlmStep
from tests.agent.unit.fake_run import (
    CID,
    FakeAgent,
    FakeBackend,
    FakeLease,
    FakeRun,
    ToolModel,
    make_run,
)


async def _drive(run: FakeRun, kind: RunKind) -> AgentError:
    async def route(_: Run) -> RunKind:
        return kind

    with pytest.raises(AgentError) as stopped:
        await drive(run, route, run.end)
    return stopped.value


async def test_a_workflow_run_stops_at_the_next_step_once_its_lease_is_lost() -> None:
    backend, agent = FakeBackend(), FakeAgent()
    steps = lambda: backend.paths("PUT", r"/steps/0$")  # noqa: E731
    lease = FakeLease(lambda: any(b.get("status") == "completed" for b in steps()))
    model = GenericFakeChatModel(messages=iter([AIMessage("one"), AIMessage("two")]))
    run = make_run(backend, agent, lease, mode="yaml", model=model)
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
    assert run.end.parts == {}  # no answer row or debug record left for the run's end to store


async def test_a_diagnosis_run_stops_before_its_next_round_once_its_lease_is_lost() -> None:
    backend, agent = FakeBackend(), FakeAgent()
    model = ToolModel(messages=iter([AIMessage("never asked")]))
    run = make_run(backend, agent, FakeLease(lambda: True), mode="diagnose", model=model)

    error = await _drive(run, DiagnosisChat())

    assert error.code == Code.CONVERSATION_BUSY
    assert [b["role"] for b in backend.paths("POST", r"/messages$")] == ["user"]  # awaited
    assert agent.updates == []
    (shown,) = [e.metadata for e in run.turn.entries if e.metadata.get("type") == "diagnosis"]
    assert shown["outcome"] == "stopped" and shown["stop_reason"] == Code.CANCELLED
    assert run.end.parts == {}


async def test_a_bad_file_after_a_queued_write_still_stores_that_write() -> None:
    """The rejection a workflow queues before it reads the files is stored, not left pending
    (a coroutine never awaited), when a file is refused."""
    backend, agent = FakeBackend(), FakeAgent()
    run = make_run(backend, agent, FakeLease(), mode="yaml", model=None)
    run.history.append_later("assistant", "rejected", {"type": "decision"})
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
    run = make_run(backend, agent, FakeLease(), mode="dynamic", model=None)
    run.lease = lease = Lease(backend, run.context, ttl_s=1.0)  # type: ignore[arg-type]
    await lease.acquire()
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        with pytest.raises(AgentError) as stopped:
            async with run.running(run.settings.agent.run_deadline_s):
                await asyncio.sleep(30)  # a long answer, streaming
    finally:
        await lease.release()
    assert stopped.value.code == Code.CONVERSATION_ARCHIVED
    assert loop.time() - started < 5  # the first renewal, at half the TTL, found it lost
    assert backend.puts == 2


async def test_a_run_streaming_past_its_deadline_times_out_as_before() -> None:
    backend, agent = FakeBackend(), FakeAgent()
    run = make_run(backend, agent, FakeLease(), mode="dynamic", model=None)
    run.services.settings = Settings(agent={"run_deadline_s": 0.1})
    with pytest.raises(TimeoutError):
        async with run.running(run.settings.agent.run_deadline_s):
            await asyncio.sleep(30)


async def test_a_run_that_lost_its_lease_writes_nothing_into_the_thread() -> None:
    # The run that took the conversation owns its thread: a stopped run closing its open calls
    # there would land after that run's messages (the chaos soak, issue 37).
    lost = False
    backend, agent = FakeBackend(), FakeAgent()
    run = make_run(backend, agent, FakeLease(lambda: lost), mode="dynamic", model=None)
    closing = [AIMessage("partial", id="a1")]

    await write_thread(run, [ThreadWrite(tuple(closing), "model")])
    lost = True
    await write_thread(run, [ThreadWrite(tuple(closing), "model")])

    assert agent.updates == [{"messages": closing}]  # the first only
